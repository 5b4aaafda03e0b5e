"""The engine/model/device choice, as toolbar widgets backed by the settings registry. The choices come from the
core engine registry; nothing is loaded here (loading happens on the worker when a run starts, and the loader's
own message says which weights are missing and how to get them)."""
from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QFileDialog, QHBoxLayout, QLabel, QToolButton, QWidget

from app.core.engines import ENGINES
from app.gui.settings import OPTIONS, Settings, engine_options
from app.gui.theme import icon

AUTO_TITLE = "Automatic (best available)"


class EngineBar(QWidget):
    choice_changed = Signal()

    def __init__(self, settings: Settings, parent=None) -> None:
        super().__init__(parent)
        self.settings = settings
        layout = QHBoxLayout(self)
        layout.setContentsMargins(4, 0, 4, 0)
        self.engine = QComboBox()
        self.engine.setToolTip("Decoding engine")
        self.engine.addItem(AUTO_TITLE, "auto")
        for spec in ENGINES.values():
            self.engine.addItem(spec.title, spec.name)
        self.device = QComboBox()
        self.device.setToolTip("Device (auto: CUDA, then Apple MPS, then CPU)")
        for name in OPTIONS["device"].choices:
            self.device.addItem(name, name)
        self.model_button = QToolButton()
        self.model_button.setIcon(icon("open"))
        self.model_button.setToolTip("Choose a model folder (otherwise found automatically)")
        self.model_button.clicked.connect(self._choose_model)
        self.model_label = QLabel()
        for w in (QLabel("Engine"), self.engine, self.model_button, self.model_label, QLabel("Device"), self.device):
            layout.addWidget(w)
        self._load()
        self.engine.currentIndexChanged.connect(self._store)
        self.device.currentIndexChanged.connect(self._store)

    def _load(self) -> None:
        i = self.engine.findData(self.settings.get("engine"))
        self.engine.setCurrentIndex(max(0, i))
        self.device.setCurrentIndex(max(0, self.device.findData(self.settings.get("device"))))
        self._show_model()

    def _show_model(self) -> None:
        path = self.settings.get("model_path")
        self.model_label.setText(path.rsplit("/", 1)[-1] if path else "")
        self.model_label.setToolTip(path)

    def _store(self) -> None:
        self.settings.set("engine", self.engine.currentData())
        self.settings.set("device", self.device.currentData())
        self.choice_changed.emit()

    def _choose_model(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Model folder", self.settings.get("model_path"))
        if folder:
            self.set_model_path(folder)

    def set_engine(self, name: str) -> None:
        i = self.engine.findData(name)
        if i >= 0:
            self.engine.setCurrentIndex(i)

    def set_model_path(self, path: str) -> None:
        self.settings.set("model_path", path)
        self._show_model()
        self.choice_changed.emit()

    @property
    def engine_name(self) -> str:
        return self.engine.currentData()

    def pipeline_options(self):
        """The chosen engine, model, device and decoding settings as the pipeline's own options (built here once;
        the run controller adds the document's password and picture folder)."""
        from app.core.pipeline.options import PipelineOptions

        s = self.settings
        chosen = lambda value: None if value in ("auto", "", 0) else value  # noqa: E731 - "auto"/0: let core pick
        limit = s.get("max_new_tokens")
        return PipelineOptions(
            engine=self.engine_name or "auto", layout=s.get("layout"), dpi=float(s.get("render_dpi")),
            device=chosen(self.device.currentData()), dtype=chosen(s.get("dtype")),
            model_path=chosen(s.get("model_path")), block_size=chosen(s.get("block_size")),
            engine_options={**({"max_new_tokens": int(limit)} if limit else {}),
                            **engine_options(self.engine_name, s)},
            layout_timeout=float(s.get("layout_timeout")), text_layer=s.get("text_layer"), batch=int(s.get("batch")),
        )
