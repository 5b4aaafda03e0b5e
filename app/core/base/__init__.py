"""The lowest floor: what every other room uses and that knows nothing of documents or models — cancel tokens,
the asyncio host, atomic writes, where the app's files are, quieting third-party noise, wording, checking data read
back against its dataclasses, where llama-server is built.

What must never live here: anything that imports another app package.
"""
