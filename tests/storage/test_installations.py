"""Installations and OAuth states in the database (Slack's, today), on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa
from slack_sdk.oauth.installation_store import Installation
from sqlalchemy.exc import DBAPIError

from bot.adapters.slack._oauth import SqlInstallationStore, SqlStateStore
from bot.errors import ConfigError
from bot.storage import (
    InstallationSql,
    SqlStore,
    TokenCipher,
    latest_version,
    make_engine,
    open_store,
)
from bot.storage._schema import installations as installations_table
from bot.storage._schema import oauth_states as states_table

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
CIPHER = TokenCipher([TokenCipher.new_key()])


def installation(team: str, user: str, token: str) -> Installation:
    return Installation(
        app_id="A0APP",
        team_id=team,
        team_name=f"Team {team}",
        bot_token=token,
        bot_id=f"B{team}",
        bot_user_id="U0BOT",
        bot_scopes=["commands", "chat:write"],
        user_id=user,
        installed_at=T0.timestamp(),
    )


async def test_latest_installation_per_workspace_and_per_installer(store: SqlStore):
    installations = SqlInstallationStore(InstallationSql(store, CIPHER), clock=lambda: T0)
    await installations.async_save(installation("T1", "UADMIN", "xoxb-1-old"))
    await installations.async_save(installation("T1", "UOTHER", "xoxb-1-new"))
    await installations.async_save(installation("T2", "UADMIN", "xoxb-2"))

    latest = await installations.async_find_installation(enterprise_id=None, team_id="T1")
    assert latest is not None and latest.bot_token == "xoxb-1-new"
    assert latest.bot_scopes == ["commands", "chat:write"]
    mine = await installations.async_find_installation(
        enterprise_id=None, team_id="T1", user_id="UADMIN"
    )
    assert mine is not None and mine.bot_token == "xoxb-1-old"
    bot = await installations.async_find_bot(enterprise_id=None, team_id="T2")
    assert bot is not None and (bot.bot_token, bot.bot_id) == ("xoxb-2", "BT2")
    assert await installations.bot_token("T3") is None

    await installations.async_delete_bot(enterprise_id=None, team_id="T1")
    assert await installations.bot_token("T1") is None
    assert await installations.bot_token("T2") == "xoxb-2"


KEY = b"k" * 32


async def state_rows(store: SqlStore) -> int:
    async with store.read() as conn:
        return int(
            (await conn.execute(sa.select(sa.func.count()).select_from(states_table))).scalar()
        )


async def test_a_state_is_used_once_and_only_before_it_expires(store: SqlStore):
    now = [T0]
    states = SqlStateStore(InstallationSql(store, CIPHER), key=KEY, clock=lambda: now[0])
    first, second = await states.async_issue(), await states.async_issue()
    assert first != second and len(first) >= 32
    assert await states.async_consume(first) is True
    assert await states.async_consume(first) is False
    assert await states.async_consume("never-issued") is False
    now[0] = T0 + timedelta(minutes=11)
    assert await states.async_consume(second) is False  # expired


async def test_issuing_states_writes_nothing_and_used_ones_are_purged(store: SqlStore):
    now = [T0]
    states = SqlStateStore(InstallationSql(store, CIPHER), key=KEY, clock=lambda: now[0])
    issued = [await states.async_issue() for _ in range(200)]
    assert await state_rows(store) == 0  # the install page costs no row
    assert await states.async_consume(issued[0]) is True
    assert await state_rows(store) == 1
    now[0] = T0 + timedelta(minutes=11)
    fresh = await states.async_issue()
    assert await states.async_consume(fresh) is True
    assert await state_rows(store) == 1  # the expired nonce went when the next one was used


@pytest.mark.parametrize(
    "tamper",
    [
        lambda s: s[:-2] + ("AA" if not s.endswith("AA") else "BB"),  # another MAC
        lambda s: s[:5] + ("A" if s[5] != "A" else "B") + s[6:],  # another nonce
        lambda s: s + "A" * 2000,  # too long
        lambda s: "é" + s[1:],  # not ASCII
        lambda s: "!!!",  # not base64
        lambda s: "",
    ],
)
async def test_a_state_not_signed_by_us_is_refused(store: SqlStore, tamper):
    states = SqlStateStore(InstallationSql(store, CIPHER), key=KEY, clock=lambda: T0)
    state = await states.async_issue()
    assert await states.async_consume(tamper(state)) is False
    other = SqlStateStore(InstallationSql(store, CIPHER), key=b"o" * 32, clock=lambda: T0)
    assert await other.async_consume(state) is False  # signed with another key
    assert await state_rows(store) == 0
    assert await states.async_consume(state) is True


async def test_replicas_racing_for_one_state_let_exactly_one_through(database_url: str):
    from bot.storage import open_store

    stores = [await open_store(database_url) for _ in range(4)]
    try:
        issuer = SqlStateStore(InstallationSql(stores[0], CIPHER), key=KEY, clock=lambda: T0)
        state = await issuer.async_issue()
        racers = [
            SqlStateStore(InstallationSql(s, CIPHER), key=KEY, clock=lambda: T0) for s in stores
        ]
        results = await asyncio.gather(*(r.async_consume(state) for r in racers for _ in range(3)))
        assert sorted(results) == [False] * 11 + [True]
    finally:
        for s in stores:
            await s.close()


async def stored_data(store: SqlStore) -> list[str]:
    async with store.read() as conn:
        return [
            str(d) for d in (await conn.execute(sa.select(installations_table.c.data))).scalars()
        ]


async def test_tokens_are_stored_encrypted(store: SqlStore):
    installations = SqlInstallationStore(InstallationSql(store, CIPHER), clock=lambda: T0)
    await installations.async_save(installation("T1", "UADMIN", "xoxb-1-secret"))
    rows = await stored_data(store)
    assert len(rows) == 2  # the workspace's latest and the installer's
    assert all("xoxb" not in row and "UADMIN" not in row and row[0] != "{" for row in rows)
    assert await installations.bot_token("T1") == "xoxb-1-secret"
    # Without the key, the rows are not readable.
    other = InstallationSql(store, TokenCipher([TokenCipher.new_key()]))
    with pytest.raises(ConfigError, match="cannot be decrypted with any key in QUIZBOT_TOKEN_KEY"):
        await other.find_installation(None, "T1")


async def test_a_key_is_rotated_and_plain_rows_are_encrypted(store: SqlStore):
    old, new = TokenCipher.new_key(), TokenCipher.new_key()
    before = SqlInstallationStore(InstallationSql(store, TokenCipher([old])), clock=lambda: T0)
    await before.async_save(installation("T1", "UADMIN", "xoxb-1-old-key"))
    # A row written before tokens were encrypted: the installation as plain JSON.
    async with store.write() as conn:
        await conn.execute(
            installations_table.insert().values(
                enterprise_id="",
                team_id="T2",
                user_id="",
                data=json.dumps({"team_id": "T2", "bot_token": "xoxb-2-plain", "user_id": "U2"}),
                installed_at=T0,
            )
        )
    both = InstallationSql(store, TokenCipher.from_setting(f"{new}, {old}"))
    after = SqlInstallationStore(both, clock=lambda: T0)
    # Both keys read, and the plain row is read too, before anything is rewritten.
    assert await after.bot_token("T1") == "xoxb-1-old-key"
    assert await after.bot_token("T2") == "xoxb-2-plain"
    assert await both.reencrypt() == (1, 2)
    assert await both.reencrypt() == (0, 0)  # nothing left to do
    assert all("xoxb" not in row for row in await stored_data(store))
    # The old key can go now: the new one alone reads every row.
    only_new = SqlInstallationStore(InstallationSql(store, TokenCipher([new])), clock=lambda: T0)
    assert await only_new.bot_token("T1") == "xoxb-1-old-key"
    assert await only_new.bot_token("T2") == "xoxb-2-plain"


async def test_a_failed_save_puts_no_token_in_the_error(store: SqlStore):
    # The review's reproduction: a failed INSERT's text carried the statement's parameters.
    sql = InstallationSql(store, CIPHER)
    document = {"team_id": "T1", "bot_token": "xoxb-1111-SECRETTOKEN"}
    with pytest.raises(DBAPIError) as failed:
        await sql.save_installation(None, "T1", "U1", document, None)  # type: ignore[arg-type]
    text = str(failed.value)
    assert "xoxb" not in text and "SECRETTOKEN" not in text
    assert "hidden due to hide_parameters" in text


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("", "QUIZBOT_TOKEN_KEY is empty"),
        ("not-a-key", "must be Fernet keys"),
        ("é" * 44, "must be Fernet keys"),
    ],
)
def test_a_bad_token_key_is_one_clear_line(value: str, message: str):
    with pytest.raises(ConfigError, match=message):
        TokenCipher.from_setting(value)


async def test_migration_24_renames_slacks_tables_and_keeps_their_rows(database_url: str):
    # A database at version 23: the tables under Slack's name, an installation and a state in them.
    store = await open_store(database_url)
    try:
        sql = InstallationSql(store, CIPHER)
        await SqlInstallationStore(sql, clock=lambda: T0).async_save(
            installation("T1", "UADMIN", "xoxb-1")
        )
        assert await sql.use_state("n1", T0 + timedelta(minutes=10), T0)
    finally:
        await store.close()
    engine = make_engine(database_url)
    try:
        async with engine.begin() as conn:
            for old, new in (
                ("slack_installations", "installations"),
                ("slack_oauth_states", "oauth_states"),
            ):
                await conn.execute(sa.text(f"ALTER TABLE {new} RENAME TO {old}"))
                if conn.dialect.name == "postgresql":
                    await conn.execute(sa.text(f"ALTER INDEX {new}_pkey RENAME TO {old}_pkey"))
            await conn.execute(sa.text("DELETE FROM schema_version WHERE version = 24"))
    finally:
        await engine.dispose()
    upgraded = await open_store(database_url)
    try:
        assert await upgraded.schema_version() == latest_version()
        sql = InstallationSql(upgraded, CIPHER)
        found = await SqlInstallationStore(sql, clock=lambda: T0).async_find_bot(
            enterprise_id=None, team_id="T1"
        )
        assert found is not None and found.bot_token == "xoxb-1"
        # The state used before the upgrade is still used.
        assert not await sql.use_state("n1", T0 + timedelta(minutes=10), T0)
        async with upgraded.read() as conn:
            names = await conn.run_sync(lambda c: set(sa.inspect(c).get_table_names()))
        assert {"installations", "oauth_states"} <= names
        assert not names & {"slack_installations", "slack_oauth_states"}
    finally:
        await upgraded.close()
