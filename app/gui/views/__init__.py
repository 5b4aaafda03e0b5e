"""Live decoding views: how the text is being produced (acceptance rounds, the R-SWA window) and playback.

The main window docks `DecodingViews` and forwards every event to `DecodingViews.feed`. Models (models.py) are
plain Python built from events; widgets paint them with QPainter at ≤ 60 frames a second.
"""
from app.gui.views.decoding_views import DecodingViews

__all__ = ["DecodingViews"]
