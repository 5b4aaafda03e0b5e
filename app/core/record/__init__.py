"""What a run leaves behind: the event vocabulary, trace files written and read back, and two traces compared.

What must never live here: decoding, layout, or anything that produces events rather than describing them.
"""
