"""Platform adapters: translate chat events into engine calls and render what the engine returns."""
