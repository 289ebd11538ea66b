"""Stand-in packages for the projects of misc.py (speech and recommendation), as texts that
prepare.py writes into a case's folder: librosa 0.7's filters and util in numpy (hifi-gan,
tacotron2), TensorFlow 1.x's ``tf.contrib.training.HParams`` and ``tf.logging`` (tacotron2) with
Keras's callbacks module (DeepCTR-Torch), and an unused tensorboardX (NCF). misc.py exports
STUBS (package -> {relative path: text}) as its own. The leading underscore keeps this module
out of projects/__init__.py's discovery: it holds no cases.
"""

from __future__ import annotations

# librosa 0.7's API as hifi-gan and tacotron2 call it (filters.mel with positional arguments,
# util.normalize / pad_center / tiny), in numpy: librosa itself would need numba and llvmlite
# (native wheels that lag numpy 2.4). The mel filterbank is librosa's Slaney formula; the values
# feed the losses of both runs alike.
_LIBROSA_UTIL = '''"""A stand-in for librosa.util (0.7): normalize, pad_center, tiny."""
import numpy as np


def tiny(x):
    x = np.asarray(x)
    dtype = x.dtype if np.issubdtype(x.dtype, np.floating) or np.issubdtype(x.dtype, np.complexfloating) else np.float32
    return np.finfo(dtype).tiny


def normalize(S, norm=np.inf, axis=0, threshold=None, fill=None):
    S = np.asarray(S)
    if threshold is None:
        threshold = tiny(S)
    mag = np.abs(S).astype(np.float64)
    if norm is None:
        return S
    if norm == np.inf:
        length = np.max(mag, axis=axis, keepdims=True)
    elif norm == -np.inf:
        length = np.min(mag, axis=axis, keepdims=True)
    elif norm == 0:
        length = np.sum(mag > 0, axis=axis, keepdims=True).astype(mag.dtype)
    else:
        length = np.sum(mag**norm, axis=axis, keepdims=True) ** (1.0 / norm)
    length = np.where(length < threshold, 1.0, length)
    return S / length


def pad_center(data, size, axis=-1, **kwargs):
    kwargs.setdefault("mode", "constant")
    n = data.shape[axis]
    lpad = int((size - n) // 2)
    lengths = [(0, 0)] * data.ndim
    lengths[axis] = (lpad, int(size - n - lpad))
    if lpad < 0:
        raise ValueError(f"Target size ({size}) must be at least input size ({n})")
    return np.pad(data, lengths, **kwargs)
'''

_LIBROSA_FILTERS = '''"""A stand-in for librosa.filters (0.7): mel (Slaney scale, area-normalised), get_window."""
import numpy as np
from scipy.signal import get_window  # noqa: F401  (librosa.filters.get_window is scipy's)


def hz_to_mel(frequencies, htk=False):
    f = np.asanyarray(frequencies, dtype=np.float64)
    if htk:
        return 2595.0 * np.log10(1.0 + f / 700.0)
    f_sp = 200.0 / 3
    mels = f / f_sp
    min_log_hz, logstep = 1000.0, np.log(6.4) / 27.0
    min_log_mel = min_log_hz / f_sp
    return np.where(f >= min_log_hz, min_log_mel + np.log(np.maximum(f, 1e-10) / min_log_hz) / logstep, mels)


def mel_to_hz(mels, htk=False):
    m = np.asanyarray(mels, dtype=np.float64)
    if htk:
        return 700.0 * (10.0 ** (m / 2595.0) - 1.0)
    f_sp = 200.0 / 3
    freqs = f_sp * m
    min_log_hz, logstep = 1000.0, np.log(6.4) / 27.0
    min_log_mel = min_log_hz / f_sp
    return np.where(m >= min_log_mel, min_log_hz * np.exp(logstep * (m - min_log_mel)), freqs)


def mel(sr, n_fft, n_mels=128, fmin=0.0, fmax=None, htk=False, norm=1, dtype=np.float32):
    if fmax is None:
        fmax = float(sr) / 2
    weights = np.zeros((int(n_mels), int(1 + n_fft // 2)), dtype=dtype)
    fftfreqs = np.linspace(0, float(sr) / 2, int(1 + n_fft // 2))
    mel_f = mel_to_hz(np.linspace(hz_to_mel(fmin, htk), hz_to_mel(fmax, htk), n_mels + 2), htk)
    fdiff = np.diff(mel_f)
    ramps = np.subtract.outer(mel_f, fftfreqs)
    for i in range(n_mels):
        lower = -ramps[i] / fdiff[i]
        upper = ramps[i + 2] / fdiff[i + 1]
        weights[i] = np.maximum(0, np.minimum(lower, upper))
    if norm in (1, "slaney"):
        enorm = 2.0 / (mel_f[2 : n_mels + 2] - mel_f[:n_mels])
        weights *= enorm[:, np.newaxis]
    return weights
'''

# TensorFlow (the stand-in package joins this and _KERAS_CALLBACKS); TensorFlow 1.x (tf.contrib) has
# no wheel for Python 3.11: tacotron2's hparams.py uses
# tf.contrib.training.HParams (a container that parses 'name=value,...' by each default's type)
# and tf.logging.info, nothing else of it.
_TENSORFLOW = '''"""A stand-in for TensorFlow 1.x: tf.contrib.training.HParams and tf.logging.info."""
import ast
import re
import types


class HParams:
    def __init__(self, **kwargs):
        self.__dict__["_names"] = list(kwargs)
        self.__dict__.update(kwargs)

    def __setattr__(self, name, value):
        if name not in self._names:
            self._names.append(name)
        self.__dict__[name] = value

    def _cast(self, name, text):
        default = self.__dict__.get(name)
        if isinstance(default, bool):
            if text.lower() in ("true", "1"):
                return True
            if text.lower() in ("false", "0"):
                return False
            raise ValueError(f"Could not parse {text!r} as bool for {name}")
        if isinstance(default, int):
            return int(text)
        if isinstance(default, float):
            return float(text)
        if isinstance(default, list):
            return ast.literal_eval(text) if text.startswith("[") else [t for t in text.split(",") if t]
        return text

    def parse(self, values):
        for m in re.finditer(r"\\s*(\\w+)\\s*=\\s*(\\[[^\\]]*\\]|[^,]*)\\s*(,|$)", values):
            name, text = m.group(1), m.group(2).strip()
            if name not in self._names:
                raise ValueError(f"Unknown hyperparameter type for {name}")
            setattr(self, name, self._cast(name, text))
        return self

    def values(self):
        return {n: self.__dict__[n] for n in self._names}

    def __repr__(self):
        return f"HParams({self.values()!r})"


contrib = types.SimpleNamespace(training=types.SimpleNamespace(HParams=HParams))

# tensorboard (under torch.utils.tensorboard) imports whatever `tensorflow` it finds and reads
# tf.io.gfile and the like from it: give it its own stand-in's names
try:
    from tensorboard.compat import tensorflow_stub as _stub

    for _name in dir(_stub):
        if not _name.startswith("__"):
            globals().setdefault(_name, getattr(_stub, _name))
except ImportError:
    pass


class logging:
    @staticmethod
    def info(msg, *args):
        print(msg % args if args else msg)
'''

# DeepCTR-Torch's fit loop drives its callbacks (History, EarlyStopping, ModelCheckpoint) through
# TensorFlow 1.x/2.x Keras's CallbackList, imported from tensorflow.python.keras: the bookkeeping
# of Keras's callbacks module (they record logs; none here changes training)
_KERAS_CALLBACKS = '''"""A stand-in for tensorflow.python.keras.callbacks: Callback, CallbackList, History,
EarlyStopping, ModelCheckpoint (bookkeeping only)."""
import numpy as np


class Callback:
    def __init__(self):
        self.model = None
        self.params = {}

    def set_model(self, model):
        self.model = model

    def set_params(self, params):
        self.params = params

    def on_epoch_begin(self, epoch, logs=None):
        pass

    def on_epoch_end(self, epoch, logs=None):
        pass

    def on_batch_begin(self, batch, logs=None):
        pass

    def on_batch_end(self, batch, logs=None):
        pass

    def on_train_begin(self, logs=None):
        pass

    def on_train_end(self, logs=None):
        pass


class History(Callback):
    def on_train_begin(self, logs=None):
        self.epoch = []
        self.history = {}

    def on_epoch_end(self, epoch, logs=None):
        self.epoch.append(epoch)
        for k, v in (logs or {}).items():
            self.history.setdefault(k, []).append(v)


class EarlyStopping(Callback):
    def __init__(self, monitor="val_loss", min_delta=0, patience=0, verbose=0, mode="auto", baseline=None,
                 restore_best_weights=False):
        super().__init__()
        self.monitor, self.min_delta, self.patience, self.verbose = monitor, abs(min_delta), patience, verbose
        self.baseline, self.restore_best_weights = baseline, restore_best_weights
        self.monitor_op = np.less if mode == "min" or (mode == "auto" and "acc" not in monitor) else np.greater
        self.wait = 0
        self.stopped_epoch = 0


class ModelCheckpoint(Callback):
    def __init__(self, filepath, monitor="val_loss", verbose=0, save_best_only=False, save_weights_only=False,
                 mode="auto", period=1):
        super().__init__()
        self.filepath, self.monitor, self.verbose = filepath, monitor, verbose
        self.save_best_only, self.save_weights_only, self.period = save_best_only, save_weights_only, period
        self.epochs_since_last_save = 0
        if mode == "min" or (mode == "auto" and "acc" not in monitor):
            self.monitor_op, self.best = np.less, np.inf
        else:
            self.monitor_op, self.best = np.greater, -np.inf


class CallbackList:
    def __init__(self, callbacks=None):
        self.callbacks = list(callbacks or [])

    def set_model(self, model):
        self.model = model
        for c in self.callbacks:
            c.set_model(model)

    def set_params(self, params):
        for c in self.callbacks:
            c.set_params(params)

    def _call(self, name, *args):
        for c in self.callbacks:
            getattr(c, name)(*args)

    def on_epoch_begin(self, epoch, logs=None):
        self._call("on_epoch_begin", epoch, logs)

    def on_epoch_end(self, epoch, logs=None):
        self._call("on_epoch_end", epoch, logs)

    def on_batch_begin(self, batch, logs=None):
        self._call("on_batch_begin", batch, logs)

    def on_batch_end(self, batch, logs=None):
        self._call("on_batch_end", batch, logs)

    def on_train_begin(self, logs=None):
        self._call("on_train_begin", logs)

    def on_train_end(self, logs=None):
        self._call("on_train_end", logs)
'''

STUBS = {
    "librosa": {
        "librosa/__init__.py": '"""A stand-in for librosa 0.7: the filters and util functions its callers use."""\n'
        "from . import filters, util  # noqa: F401\n",
        "librosa/util.py": _LIBROSA_UTIL,
        "librosa/filters.py": _LIBROSA_FILTERS,
    },
    "tensorflow": {
        "tensorflow/__init__.py": _TENSORFLOW,
        "tensorflow/python/__init__.py": "",
        "tensorflow/python/keras/__init__.py": "",
        "tensorflow/python/keras/callbacks.py": _KERAS_CALLBACKS,
    },
    # tensorboardX: NCF imports its SummaryWriter and never makes one (the line is commented out)
    "tensorboardX": {"tensorboardX/__init__.py": '"""A stand-in: imported, never used."""\n\nSummaryWriter = None\n'},
}
