"""Installation tokens encrypted at rest with Fernet (AES-128-CBC with HMAC-SHA256).

QUIZBOT_TOKEN_KEY holds one key, or several separated by commas: the first encrypts every new
write, and every one of them decrypts, so a key can be replaced without a moment where stored
rows cannot be read (``docs/security.md``, "Rotating secrets"). A database dump or backup then
holds no usable token without the key, which lives only in the environment.
"""

from __future__ import annotations

from cryptography.fernet import Fernet, InvalidToken, MultiFernet

from bot.errors import ConfigError

KEY_VARIABLE = "QUIZBOT_TOKEN_KEY"
NEW_KEY_COMMAND = "quizbot db new-token-key"


class TokenCipher:
    """Encrypt with the first key, decrypt with any of them."""

    def __init__(self, keys: list[str]) -> None:
        if not keys:
            raise ConfigError(f"{KEY_VARIABLE} is empty; make a key with `{NEW_KEY_COMMAND}`")
        try:
            self._keys = [Fernet(key.encode("ascii")) for key in keys]
        except (ValueError, UnicodeEncodeError):
            raise ConfigError(
                f"{KEY_VARIABLE} must be Fernet keys (32 bytes in URL-safe base64, 44 "
                f"characters) separated by commas; make one with `{NEW_KEY_COMMAND}`"
            ) from None
        self._all = MultiFernet(self._keys)

    @classmethod
    def from_setting(cls, value: str) -> TokenCipher:
        """Return the cipher for a QUIZBOT_TOKEN_KEY value (newest key first)."""
        return cls([part.strip() for part in value.split(",") if part.strip()])

    @staticmethod
    def new_key() -> str:
        """Return a fresh random key."""
        return Fernet.generate_key().decode("ascii")

    def encrypt(self, plain: str) -> str:
        """Return the text encrypted under the current (first) key."""
        return self._keys[0].encrypt(plain.encode()).decode("ascii")

    def decrypt(self, token: str) -> str:
        """Return the plain text; ConfigError when no key opens it."""
        try:
            return self._all.decrypt(token.encode("ascii")).decode()
        except (InvalidToken, UnicodeEncodeError):
            raise ConfigError(
                f"a stored Slack installation cannot be decrypted with any key in {KEY_VARIABLE}"
                " (was the key that wrote it removed?)"
            ) from None

    def is_current(self, token: str) -> bool:
        """Return whether the current key wrote this value (nothing to re-encrypt)."""
        try:
            self._keys[0].decrypt(token.encode("ascii"))
        except (InvalidToken, UnicodeEncodeError):
            return False
        return True
