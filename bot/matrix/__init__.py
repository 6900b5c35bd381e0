"""The bot's Matrix account: the only package that imports matrix-nio.

`account.MatrixAccount` is what the rest of the bot uses; `nio_account.NioAccount` is it
on a homeserver (logged in by `login.connect`), `fake.FakeAccount` in memory for tests.
"""
