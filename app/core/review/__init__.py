"""The Qt-free review: open documents and their blocks, the person's edits and conflicts (`session`,
`document`), and the run controller that owns run state, the queue of documents and trace recording (`runs`).

What must never live here: Qt, torch, decoding.
"""
