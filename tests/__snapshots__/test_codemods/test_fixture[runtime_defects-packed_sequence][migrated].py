"""A text encoder that packs its variable-length batch for a bidirectional LSTM, as tacotron2's
does, and a packed batch built from a list of sequences. [XLA102, XLA109, XLA905]"""

import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pack_sequence, pad_packed_sequence
import torch_xla

torch.__future__.set_swap_module_params_on_conversion(True)


class Encoder(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.lstm = nn.LSTM(dim, dim // 2, batch_first=True, bidirectional=True)

    def forward(self, x, lengths):
        # TODO(xla-migrate): XLA905 `pack_padded_sequence(x, lengths.cpu().numpy(), batch_firs...`: torch_xla 2.9 runs no RNN on a PackedSequence on the XLA device (nn.LSTM and nn.RNN raise "The tensor has a non-zero number of elements, but its data is not allocated yet", its GRU asserts "PackedSequence is not supported"; measured on CPU PJRT, xla-migrate's docs/runtime_defects.md): give the RNN the padded batch instead: a unidirectional RNN's outputs at each sequence's own steps are the same, but its final states and a bidirectional RNN's backward direction read the padding (take each sequence's last output by its length, or run the backward direction on the sequences reversed within their lengths)
        packed = pack_padded_sequence(x, lengths.cpu().numpy(), batch_first=True, enforce_sorted=False)
        outputs, _ = self.lstm(packed)
        outputs, _ = pad_packed_sequence(outputs, batch_first=True)
        return outputs


def encode(sequences):
    encoder = Encoder().to("xla")
    # TODO(xla-migrate): XLA905 `pack_sequence(sequences, enforce_sorted=False)`: torch_xla 2.9 runs no RNN on a PackedSequence on the XLA device (nn.LSTM and nn.RNN raise "The tensor has a non-zero number of elements, but its data is not allocated yet", its GRU asserts "PackedSequence is not supported"; measured on CPU PJRT, xla-migrate's docs/runtime_defects.md): give the RNN the padded batch instead: a unidirectional RNN's outputs at each sequence's own steps are the same, but its final states and a bidirectional RNN's backward direction read the padding (take each sequence's last output by its length, or run the backward direction on the sequences reversed within their lengths)
    return encoder.lstm(pack_sequence(sequences, enforce_sorted=False))
