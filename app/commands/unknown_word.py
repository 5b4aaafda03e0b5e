"""The first word of a command line that is neither a subcommand nor a file: said in one line before anything
heavy is imported (no window opens on a typo). Pure string and path checks live here; no command's work."""
from __future__ import annotations

import difflib
from pathlib import Path


def refuse_word(word: str, commands) -> str | None:
    """None when `word` is an existing path (the window opens on it); else the one line to print (exit 2): an
    unknown command with the nearest command named, or a missing file when the word looks like a path."""
    if Path(word).exists():
        return None
    if Path(word).suffix or "/" in word or "\\" in word:
        return f"scriptorium: {word}: no such file"
    near = difflib.get_close_matches(word, list(commands), n=1, cutoff=0.6)
    if near:
        return f"scriptorium: unknown command '{word}' (did you mean '{near[0]}'?)"
    return f"scriptorium: unknown command '{word}' (commands: {', '.join(commands)}; see 'scriptorium --help')"


def missing_files(paths) -> str | None:
    """The one line for the first path that does not exist, or None when all do."""
    for text in paths:
        if not Path(text).exists():
            return f"{text}: no such file"
    return None


def unreadable_inputs(paths) -> str | None:
    """convert's inputs checked before any model loads: the first missing path, or a folder holding no document
    or image, as one line; None when every input can be read."""
    missing = missing_files(paths)
    if missing:
        return missing
    from app.commands.convert_inputs import expand_inputs

    _, empty = expand_inputs([text for text in paths if Path(text).is_dir()])
    if empty:
        return f"{empty[0]}: no documents or images in this folder"
    return None
