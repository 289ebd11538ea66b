"""What torch_xla 2.9.0 can run of the APIs xla-migrate's XLA902 handles (sparse tensors).

Generated from the installed torch and torch_xla by migrate_xla/generators/make_xla_ops.py; do not
edit. Regenerate it after an upgrade of torch_xla:

    .venv/bin/python -m migrate_xla.generators.make_xla_ops  (or: make xla-ops)
"""

TORCH_VERSION = "2.9.0"
TORCH_XLA_VERSION = "2.9.0"

# A sparse tensor on the XLA device dispatches to SparseXLA (COO) or SparseCsrXLA (CSR, CSC,
# BSR, BSC): the aten operators torch_xla registers a kernel for there, and whether it
# registers a fallback for the key. With neither, no sparse tensor can be on the device: its
# move there (adj.to(device)) raises NotImplementedError ("... from the 'SparseXLA' backend").
SPARSE_XLA_KERNELS = frozenset()
SPARSE_XLA_FALLBACK = False
SPARSE_CSR_XLA_KERNELS = frozenset()
SPARSE_CSR_XLA_FALLBACK = False

# A dense tensor dispatches to XLA: torch_xla's kernels (its lowerings) are XLA_KERNELS, at the
# end; any other operator runs through its fallback for the key, on the CPU, when XLA_FALLBACK.
XLA_FALLBACK = True

# How the XLA device runs each aten operator the APIs below call, with the key it meets
# there: "kernel" (torch_xla's), "composite" (torch's decomposition into other operators),
# "cpu-fallback" (torch_xla runs it on the CPU) or "none" (NotImplementedError).
OPERATORS = {
    "aten::_coalesce SparseXLA": "none",
    "aten::_indices SparseXLA": "none",
    "aten::_nnz SparseXLA": "none",
    "aten::_sparse_addmm SparseXLA": "composite",
    "aten::_sparse_coo_tensor_with_dims_and_tensors SparseXLA": "none",
    "aten::_sparse_log_softmax SparseXLA": "none",
    "aten::_sparse_softmax SparseXLA": "none",
    "aten::_sparse_sum.dim SparseXLA": "composite",
    "aten::_to_sparse SparseXLA": "none",
    "aten::_to_sparse_csc SparseCsrXLA": "none",
    "aten::_to_sparse_csr SparseCsrXLA": "none",
    "aten::_values SparseXLA": "none",
    "aten::addmm XLA": "kernel",
    "aten::detach XLA": "composite",
    "aten::empty.memory_format SparseXLA": "none",
    "aten::hspmm SparseXLA": "none",
    "aten::is_coalesced SparseXLA": "composite",
    "aten::mm SparseXLA": "none",
    "aten::mm XLA": "kernel",
    "aten::sparse_compressed_tensor.comp_plain_value_size SparseCsrXLA": "composite",
    "aten::sspaddmm.out SparseXLA": "none",
    "aten::sum.dim_IntList XLA": "kernel",
    "aten::zeros XLA": "composite",
}

# Each public API XLA902 handles and the aten operators it calls (keys of OPERATORS), traced
# on the CPU; the operators of a composite one are not listed.
APIS = {
    "torch.sparse_coo_tensor": ("aten::_sparse_coo_tensor_with_dims_and_tensors SparseXLA",),
    "torch.sparse_csr_tensor": ("aten::sparse_compressed_tensor.comp_plain_value_size SparseCsrXLA",),
    "torch.sparse_csc_tensor": ("aten::sparse_compressed_tensor.comp_plain_value_size SparseCsrXLA",),
    "torch.sparse.FloatTensor": ("aten::_sparse_coo_tensor_with_dims_and_tensors SparseXLA",),
    "torch.sparse.DoubleTensor": ("aten::_sparse_coo_tensor_with_dims_and_tensors SparseXLA",),
    "torch.sparse.HalfTensor": ("aten::_sparse_coo_tensor_with_dims_and_tensors SparseXLA",),
    "torch.sparse.BFloat16Tensor": ("aten::_sparse_coo_tensor_with_dims_and_tensors SparseXLA",),
    "torch.sparse.ByteTensor": ("aten::_sparse_coo_tensor_with_dims_and_tensors SparseXLA",),
    "torch.sparse.CharTensor": ("aten::_sparse_coo_tensor_with_dims_and_tensors SparseXLA",),
    "torch.sparse.ShortTensor": ("aten::_sparse_coo_tensor_with_dims_and_tensors SparseXLA",),
    "torch.sparse.IntTensor": ("aten::_sparse_coo_tensor_with_dims_and_tensors SparseXLA",),
    "torch.sparse.LongTensor": ("aten::_sparse_coo_tensor_with_dims_and_tensors SparseXLA",),
    "Tensor.to_sparse": ("aten::_to_sparse SparseXLA",),
    "Tensor.to_sparse_coo": ("aten::_to_sparse SparseXLA",),
    "Tensor.to_sparse_csr": ("aten::_to_sparse_csr SparseCsrXLA",),
    "Tensor.to_sparse_csc": ("aten::_to_sparse_csc SparseCsrXLA",),
    "torch.spmm": ("aten::mm SparseXLA",),
    "torch.sparse.mm": (
        "aten::zeros XLA",
        "aten::_sparse_addmm SparseXLA",
    ),
    "torch.sparse.addmm": ("aten::_sparse_addmm SparseXLA",),
    "torch.sparse.sum": ("aten::_sparse_sum.dim SparseXLA",),
    "torch.sparse.softmax": ("aten::_sparse_softmax SparseXLA",),
    "torch.sparse.log_softmax": ("aten::_sparse_log_softmax SparseXLA",),
    "torch.smm": (
        "aten::empty.memory_format SparseXLA",
        "aten::sspaddmm.out SparseXLA",
    ),
    "torch.hspmm": ("aten::hspmm SparseXLA",),
    "torch.sspaddmm": (
        "aten::empty.memory_format SparseXLA",
        "aten::sspaddmm.out SparseXLA",
    ),
    "Tensor.coalesce": (
        "aten::is_coalesced SparseXLA",
        "aten::_coalesce SparseXLA",
    ),
    "Tensor._indices": (
        "aten::_indices SparseXLA",
        "aten::detach XLA",
    ),
    "Tensor._values": (
        "aten::_values SparseXLA",
        "aten::detach XLA",
    ),
    "Tensor._nnz": ("aten::_nnz SparseXLA",),
    "torch.mm": ("aten::mm XLA",),
    "torch.addmm": ("aten::addmm XLA",),
    "torch.sum": ("aten::sum.dim_IntList XLA",),
}

# The APIs the XLA device cannot run: an operator of theirs has no kernel there, or holds a
# sparse tensor, which the device cannot hold (above).
CANNOT_RUN = frozenset(
    {
        "torch.sparse_coo_tensor",
        "torch.sparse_csr_tensor",
        "torch.sparse_csc_tensor",
        "torch.sparse.FloatTensor",
        "torch.sparse.DoubleTensor",
        "torch.sparse.HalfTensor",
        "torch.sparse.BFloat16Tensor",
        "torch.sparse.ByteTensor",
        "torch.sparse.CharTensor",
        "torch.sparse.ShortTensor",
        "torch.sparse.IntTensor",
        "torch.sparse.LongTensor",
        "Tensor.to_sparse",
        "Tensor.to_sparse_coo",
        "Tensor.to_sparse_csr",
        "Tensor.to_sparse_csc",
        "torch.spmm",
        "torch.sparse.mm",
        "torch.sparse.addmm",
        "torch.sparse.sum",
        "torch.sparse.softmax",
        "torch.sparse.log_softmax",
        "torch.smm",
        "torch.hspmm",
        "torch.sspaddmm",
        "Tensor.coalesce",
        "Tensor._indices",
        "Tensor._values",
        "Tensor._nnz",
    }
)


def runs_on_xla(api: str) -> bool | None:
    """Whether the XLA device runs ``api`` (``torch.spmm``, ``Tensor.to_sparse``); None when the table does not say."""
    return None if api not in APIS else api not in CANNOT_RUN


# The aten operators with a kernel for the XLA dispatch key (827).
XLA_KERNELS = frozenset(
    """
    aten::__ilshift__.Scalar aten::__ilshift__.Tensor aten::__irshift__.Scalar aten::__irshift__.Tensor
    aten::__lshift__.Scalar aten::__lshift__.Scalar_out aten::__lshift__.Tensor aten::__lshift__.Tensor_out
    aten::__rshift__.Scalar aten::__rshift__.Scalar_out aten::__rshift__.Tensor aten::__rshift__.Tensor_out
    aten::_adaptive_avg_pool2d aten::_adaptive_avg_pool2d.out aten::_adaptive_avg_pool2d_backward
    aten::_adaptive_avg_pool2d_backward.out aten::_adaptive_avg_pool3d aten::_adaptive_avg_pool3d.out
    aten::_adaptive_avg_pool3d_backward aten::_adaptive_avg_pool3d_backward.out
    aten::_amp_foreach_non_finite_check_and_unscale_ aten::_amp_update_scale_ aten::_cdist_forward
    aten::_cdist_forward.out aten::_conj_copy aten::_conj_copy.out aten::_convolution aten::_convolution.out
    aten::_copy_from aten::_copy_from.out aten::_copy_from_and_resize aten::_copy_from_and_resize.out
    aten::_embedding_bag_backward aten::_embedding_bag_forward_only aten::_embedding_bag_forward_only.out
    aten::_euclidean_dist aten::_euclidean_dist.out aten::_index_put_impl_ aten::_linalg_eigh
    aten::_linalg_eigh.eigenvalues aten::_linalg_slogdet aten::_linalg_slogdet.sign aten::_linalg_svd
    aten::_linalg_svd.U aten::_local_scalar_dense aten::_log_softmax aten::_log_softmax.out
    aten::_log_softmax_backward_data aten::_log_softmax_backward_data.out aten::_native_batch_norm_legit
    aten::_native_batch_norm_legit.no_stats aten::_native_batch_norm_legit.no_stats_out aten::_pack_padded_sequence
    aten::_pack_padded_sequence.out aten::_pdist_forward aten::_pdist_forward.out aten::_prelu_kernel
    aten::_prelu_kernel_backward aten::_propagate_xla_data aten::_softmax aten::_softmax.out
    aten::_softmax_backward_data aten::_softmax_backward_data.out aten::_to_copy aten::_to_copy.out aten::_to_cpu
    aten::_trilinear aten::_trilinear.out aten::_unsafe_view aten::_unsafe_view.out aten::abs aten::abs.out
    aten::abs_ aten::acos aten::acos.out aten::acos_ aten::acosh aten::acosh.out aten::acosh_
    aten::adaptive_max_pool2d aten::adaptive_max_pool2d.out aten::adaptive_max_pool2d_backward
    aten::adaptive_max_pool2d_backward.grad_input aten::add.Scalar aten::add.Scalar_out aten::add.Tensor
    aten::add.out aten::add_.Scalar aten::add_.Tensor aten::addcdiv aten::addcdiv.out aten::addcdiv_ aten::addcmul
    aten::addcmul.out aten::addcmul_ aten::addmm aten::addmm.out aten::addmm_ aten::affine_grid_generator
    aten::affine_grid_generator.out aten::alias aten::alias_copy aten::alias_copy.out aten::all aten::all.all_out
    aten::all.dim aten::all.out aten::amax aten::amax.out aten::amin aten::amin.out aten::any aten::any.all_out
    aten::any.dim aten::any.out aten::arange.start_out aten::argmax aten::argmax.out aten::argmin aten::argmin.out
    aten::as_strided aten::as_strided_ aten::as_strided_copy aten::as_strided_copy.out aten::as_strided_scatter
    aten::as_strided_scatter.out aten::asin aten::asin.out aten::asin_ aten::asinh aten::asinh.out aten::asinh_
    aten::atan aten::atan.out aten::atan2 aten::atan2.out aten::atan2_ aten::atan_ aten::atanh aten::atanh.out
    aten::atanh_ aten::avg_pool2d aten::avg_pool2d.out aten::avg_pool2d_backward
    aten::avg_pool2d_backward.grad_input aten::avg_pool3d aten::avg_pool3d.out aten::avg_pool3d_backward
    aten::avg_pool3d_backward.grad_input aten::baddbmm aten::baddbmm.out aten::baddbmm_ aten::bernoulli
    aten::bernoulli.float_out aten::bernoulli.out aten::bernoulli.p aten::bernoulli_.Tensor aten::bernoulli_.float
    aten::binary_cross_entropy aten::binary_cross_entropy.out aten::binary_cross_entropy_backward
    aten::binary_cross_entropy_backward.grad_input aten::binary_cross_entropy_with_logits
    aten::binary_cross_entropy_with_logits.out aten::bitwise_and.Tensor aten::bitwise_and.Tensor_out
    aten::bitwise_and_.Tensor aten::bitwise_left_shift.Tensor aten::bitwise_left_shift.Tensor_out
    aten::bitwise_left_shift_.Tensor aten::bitwise_not aten::bitwise_not.out aten::bitwise_not_
    aten::bitwise_or.Tensor aten::bitwise_or.Tensor_out aten::bitwise_or_.Tensor aten::bitwise_right_shift.Tensor
    aten::bitwise_right_shift.Tensor_out aten::bitwise_right_shift_.Tensor aten::bitwise_xor.Tensor
    aten::bitwise_xor.Tensor_out aten::bitwise_xor_.Tensor aten::block_diag aten::block_diag.out aten::bmm
    aten::bmm.out aten::cat aten::cat.out aten::ceil aten::ceil.out aten::ceil_ aten::celu aten::celu.out
    aten::celu_ aten::cholesky aten::cholesky.out aten::clamp aten::clamp.Tensor aten::clamp.Tensor_out
    aten::clamp.out aten::clamp_ aten::clamp_.Tensor aten::clamp_max aten::clamp_max.Tensor
    aten::clamp_max.Tensor_out aten::clamp_max.out aten::clamp_max_ aten::clamp_max_.Tensor aten::clamp_min
    aten::clamp_min.Tensor aten::clamp_min.Tensor_out aten::clamp_min.out aten::clamp_min_ aten::clamp_min_.Tensor
    aten::clone aten::clone.out aten::constant_pad_nd aten::constant_pad_nd.out aten::convolution_backward
    aten::convolution_backward.out aten::convolution_backward_overrideable
    aten::convolution_backward_overrideable.out aten::convolution_overrideable aten::convolution_overrideable.out
    aten::copy aten::copy.out aten::copy_ aten::cos aten::cos.out aten::cos_ aten::cosh aten::cosh.out aten::cosh_
    aten::count_nonzero aten::count_nonzero.dim_IntList aten::count_nonzero.dim_IntList_out aten::count_nonzero.out
    aten::cross aten::cross.out aten::cummax aten::cummax.out aten::cumprod aten::cumprod.out aten::cumprod_
    aten::cumsum aten::cumsum.out aten::cumsum_ aten::detach_copy aten::detach_copy.out aten::diag aten::diag.out
    aten::diag_embed aten::diag_embed.out aten::diagonal aten::diagonal_backward aten::diagonal_backward.out
    aten::diagonal_copy aten::diagonal_copy.out aten::diagonal_scatter aten::diagonal_scatter.out aten::div.Scalar
    aten::div.Scalar_out aten::div.Tensor aten::div.Tensor_mode aten::div.out aten::div.out_mode aten::div_.Scalar
    aten::div_.Tensor aten::div_.Tensor_mode aten::dot aten::dot.out aten::einsum aten::elu aten::elu.out aten::elu_
    aten::elu_backward aten::elu_backward.grad_input aten::embedding aten::embedding.out
    aten::embedding_dense_backward aten::embedding_dense_backward.out aten::empty.memory_format aten::empty.out
    aten::empty_strided aten::empty_strided.out aten::eq.Scalar aten::eq.Scalar_out aten::eq.Tensor
    aten::eq.Tensor_out aten::eq_.Scalar aten::eq_.Tensor aten::erf aten::erf.out aten::erf_ aten::erfc
    aten::erfc.out aten::erfc_ aten::erfinv aten::erfinv.out aten::erfinv_ aten::exp aten::exp.out aten::exp_
    aten::expand aten::expand_copy aten::expand_copy.out aten::expm1 aten::expm1.out aten::expm1_ aten::exponential_
    aten::eye.m_out aten::eye.out aten::fill_.Scalar aten::fill_.Tensor aten::flip aten::flip.out aten::floor
    aten::floor.out aten::floor_ aten::floor_divide aten::floor_divide.out aten::floor_divide_.Tensor
    aten::fmod.Scalar aten::fmod.Scalar_out aten::fmod.Tensor aten::fmod.Tensor_out aten::fmod_.Scalar
    aten::fmod_.Tensor aten::frac aten::frac.out aten::frac_ aten::full aten::full.out aten::gather aten::gather.out
    aten::ge.Scalar aten::ge.Scalar_out aten::ge.Tensor aten::ge.Tensor_out aten::ge_.Scalar aten::ge_.Tensor
    aten::gelu aten::gelu.out aten::gelu_ aten::gelu_backward aten::gelu_backward.grad_input aten::glu aten::glu.out
    aten::gt.Scalar aten::gt.Scalar_out aten::gt.Tensor aten::gt.Tensor_out aten::gt_.Scalar aten::gt_.Tensor
    aten::hardshrink aten::hardshrink.out aten::hardshrink_backward aten::hardshrink_backward.grad_input
    aten::hardsigmoid aten::hardsigmoid.out aten::hardsigmoid_ aten::hardsigmoid_backward
    aten::hardsigmoid_backward.grad_input aten::hardswish aten::hardswish.out aten::hardswish_
    aten::hardswish_backward aten::hardswish_backward.out aten::hardtanh aten::hardtanh.out aten::hardtanh_
    aten::hardtanh_backward aten::hardtanh_backward.grad_input aten::index.Tensor aten::index.Tensor_out
    aten::index_add aten::index_add.out aten::index_add_ aten::index_copy aten::index_copy.out aten::index_copy_
    aten::index_fill_.int_Scalar aten::index_fill_.int_Tensor aten::index_put_ aten::index_select
    aten::index_select.out aten::inverse aten::inverse.out aten::isnan aten::isnan.out aten::isneginf
    aten::isneginf.out aten::kl_div aten::kthvalue aten::kthvalue.values aten::le.Scalar aten::le.Scalar_out
    aten::le.Tensor aten::le.Tensor_out aten::le_.Scalar aten::le_.Tensor aten::leaky_relu aten::leaky_relu.out
    aten::leaky_relu_ aten::leaky_relu_backward aten::leaky_relu_backward.grad_input aten::lerp.Scalar
    aten::lerp.Scalar_out aten::lerp.Tensor aten::lerp.Tensor_out aten::lerp_.Scalar aten::lerp_.Tensor aten::lift
    aten::lift.out aten::lift_fresh aten::linalg_inv_ex aten::linalg_inv_ex.inverse
    aten::linalg_pinv.atol_rtol_tensor aten::linalg_pinv.atol_rtol_tensor_out aten::linalg_vector_norm
    aten::linalg_vector_norm.out aten::linspace aten::linspace.out aten::log aten::log.out aten::log10
    aten::log10.out aten::log10_ aten::log1p aten::log1p.out aten::log1p_ aten::log2 aten::log2.out aten::log2_
    aten::log_ aten::log_sigmoid_backward aten::log_sigmoid_backward.grad_input aten::log_sigmoid_forward
    aten::log_sigmoid_forward.output aten::logdet aten::logical_and aten::logical_and.out aten::logical_and_
    aten::logical_not aten::logical_not.out aten::logical_not_ aten::logical_or aten::logical_or.out
    aten::logical_or_ aten::logical_xor aten::logical_xor.out aten::logical_xor_ aten::logit aten::logit.out
    aten::logit_ aten::logsumexp aten::logsumexp.out aten::lt.Scalar aten::lt.Scalar_out aten::lt.Tensor
    aten::lt.Tensor_out aten::lt_.Scalar aten::lt_.Tensor aten::masked_fill.Scalar aten::masked_fill.Scalar_out
    aten::masked_fill.Tensor aten::masked_fill.Tensor_out aten::masked_fill_.Scalar aten::masked_fill_.Tensor
    aten::masked_scatter aten::masked_scatter.out aten::masked_scatter_ aten::masked_select aten::masked_select.out
    aten::max aten::max.dim aten::max.dim_max aten::max.unary_out aten::max_pool2d_with_indices
    aten::max_pool2d_with_indices.out aten::max_pool2d_with_indices_backward
    aten::max_pool2d_with_indices_backward.grad_input aten::max_pool3d_with_indices
    aten::max_pool3d_with_indices.out aten::max_pool3d_with_indices_backward
    aten::max_pool3d_with_indices_backward.grad_input aten::max_unpool2d aten::max_unpool2d.out aten::max_unpool3d
    aten::max_unpool3d.out aten::maximum aten::maximum.out aten::mean aten::mean.dim aten::mean.dtype_out
    aten::mean.out aten::min aten::min.dim aten::min.dim_min aten::min.unary_out aten::minimum aten::minimum.out
    aten::mish aten::mish.out aten::mish_ aten::mm aten::mm.out aten::mse_loss aten::mse_loss.out
    aten::mse_loss_backward aten::mse_loss_backward.grad_input aten::mul.Scalar aten::mul.Scalar_out
    aten::mul.Tensor aten::mul.out aten::mul_.Scalar aten::mul_.Tensor aten::multinomial aten::multinomial.out
    aten::mv aten::mv.out aten::mvlgamma aten::mvlgamma.out aten::mvlgamma_ aten::nan_to_num aten::nan_to_num.out
    aten::nan_to_num_ aten::narrow_copy aten::narrow_copy.out aten::native_batch_norm aten::native_batch_norm.out
    aten::native_batch_norm_backward aten::native_batch_norm_backward.out aten::native_dropout
    aten::native_dropout.out aten::native_dropout_backward aten::native_dropout_backward.out aten::ne.Scalar
    aten::ne.Scalar_out aten::ne.Tensor aten::ne.Tensor_out aten::ne_.Scalar aten::ne_.Tensor aten::neg
    aten::neg.out aten::neg_ aten::new_empty_strided aten::new_empty_strided.out aten::nll_loss2d_backward
    aten::nll_loss2d_backward.grad_input aten::nll_loss2d_forward aten::nll_loss2d_forward.output
    aten::nll_loss_backward aten::nll_loss_backward.grad_input aten::nll_loss_forward aten::nll_loss_forward.output
    aten::nonzero aten::nonzero.out aten::norm.Scalar aten::norm.ScalarOpt_dim aten::norm.ScalarOpt_dim_dtype
    aten::norm.ScalarOpt_dtype aten::norm.ScalarOpt_dtype_out aten::norm.Scalar_out aten::norm.dtype_out
    aten::norm.out aten::normal.Tensor_Tensor aten::normal.Tensor_Tensor_out aten::normal.Tensor_float
    aten::normal.Tensor_float_out aten::normal.float_Tensor aten::normal.float_Tensor_out aten::normal_
    aten::permute aten::permute_copy aten::permute_copy.out aten::pixel_shuffle aten::pixel_shuffle.out
    aten::pixel_unshuffle aten::pixel_unshuffle.out aten::pow.Scalar aten::pow.Scalar_out aten::pow.Tensor_Scalar
    aten::pow.Tensor_Scalar_out aten::pow.Tensor_Tensor aten::pow.Tensor_Tensor_out aten::pow_.Scalar
    aten::pow_.Tensor aten::prod aten::prod.dim_int aten::prod.int_out aten::prod.out aten::put_ aten::qr aten::qr.Q
    aten::random_ aten::random_.from aten::random_.to aten::randperm aten::randperm.out aten::reciprocal
    aten::reciprocal.out aten::reciprocal_ aten::reflection_pad1d aten::reflection_pad1d.out
    aten::reflection_pad1d_backward aten::reflection_pad1d_backward.grad_input aten::reflection_pad2d
    aten::reflection_pad2d.out aten::reflection_pad2d_backward aten::reflection_pad2d_backward.grad_input
    aten::reflection_pad3d aten::reflection_pad3d.out aten::reflection_pad3d_backward
    aten::reflection_pad3d_backward.grad_input aten::relu aten::relu.out aten::relu_ aten::remainder.Scalar
    aten::remainder.Scalar_out aten::remainder.Tensor aten::remainder.Tensor_out aten::remainder_.Scalar
    aten::remainder_.Tensor aten::repeat aten::repeat.out aten::replication_pad1d aten::replication_pad1d.out
    aten::replication_pad1d_backward aten::replication_pad1d_backward.grad_input aten::replication_pad2d
    aten::replication_pad2d.out aten::replication_pad2d_backward aten::replication_pad2d_backward.grad_input
    aten::replication_pad3d aten::replication_pad3d.out aten::replication_pad3d_backward
    aten::replication_pad3d_backward.grad_input aten::resize_ aten::roll aten::roll.out aten::round aten::round.out
    aten::round_ aten::rrelu_with_noise aten::rrelu_with_noise_backward aten::rrelu_with_noise_backward.out
    aten::rsqrt aten::rsqrt.out aten::rsqrt_ aten::rsub.Scalar aten::rsub.Scalar_out aten::rsub.Tensor
    aten::rsub.Tensor_out aten::scatter.reduce aten::scatter.reduce_out aten::scatter.src aten::scatter.src_out
    aten::scatter.value aten::scatter.value_out aten::scatter.value_reduce aten::scatter.value_reduce_out
    aten::scatter_.reduce aten::scatter_.src aten::scatter_.value aten::scatter_.value_reduce aten::scatter_add
    aten::scatter_add.out aten::scatter_add_ aten::scatter_reduce.two aten::scatter_reduce.two_out
    aten::scatter_reduce_.two aten::select.int aten::select_backward aten::select_backward.out aten::select_copy.int
    aten::select_copy.int_out aten::select_scatter aten::select_scatter.out aten::selu aten::selu_
    aten::set_.source_Tensor aten::sgn aten::sgn.out aten::sgn_ aten::sigmoid aten::sigmoid.out aten::sigmoid_
    aten::sigmoid_backward aten::sigmoid_backward.grad_input aten::sign aten::sign.out aten::sign_ aten::silu
    aten::silu.out aten::silu_ aten::silu_backward aten::silu_backward.grad_input aten::sin aten::sin.out aten::sin_
    aten::sinh aten::sinh.out aten::sinh_ aten::slice.Tensor aten::slice_backward aten::slice_backward.out
    aten::slice_copy.Tensor aten::slice_copy.Tensor_out aten::slice_scatter aten::slice_scatter.out
    aten::smooth_l1_loss aten::smooth_l1_loss.out aten::smooth_l1_loss_backward
    aten::smooth_l1_loss_backward.grad_input aten::softplus aten::softplus.out aten::softplus_backward
    aten::softplus_backward.grad_input aten::softshrink aten::softshrink.out aten::softshrink_backward
    aten::softshrink_backward.grad_input aten::sort aten::sort.stable aten::sort.values aten::sort.values_stable
    aten::split_copy.Tensor aten::split_copy.Tensor_out aten::split_with_sizes_copy aten::split_with_sizes_copy.out
    aten::sqrt aten::sqrt.out aten::sqrt_ aten::squeeze_copy aten::squeeze_copy.dim aten::squeeze_copy.dim_out
    aten::squeeze_copy.dims aten::squeeze_copy.dims_out aten::squeeze_copy.out aten::stack aten::stack.out aten::std
    aten::std.correction aten::std.correction_out aten::std.dim aten::std.out aten::std_mean.correction
    aten::std_mean.correction_out aten::sub.Scalar aten::sub.Scalar_out aten::sub.Tensor aten::sub.out
    aten::sub_.Scalar aten::sub_.Tensor aten::sum aten::sum.IntList_out aten::sum.dim_IntList aten::sum.out
    aten::svd aten::svd.U aten::t aten::t_copy aten::t_copy.out aten::take aten::take.out aten::tan aten::tan.out
    aten::tan_ aten::tanh aten::tanh.out aten::tanh_ aten::tanh_backward aten::tanh_backward.grad_input
    aten::threshold aten::threshold.out aten::threshold_ aten::threshold_backward
    aten::threshold_backward.grad_input aten::topk aten::topk.values aten::trace aten::trace.out
    aten::transpose_copy.int aten::transpose_copy.int_out aten::triangular_solve aten::triangular_solve.X aten::tril
    aten::tril.out aten::tril_ aten::triu aten::triu.out aten::triu_ aten::trunc aten::trunc.out aten::trunc_
    aten::unbind_copy.int aten::unbind_copy.int_out aten::uniform_ aten::unsqueeze_copy aten::unsqueeze_copy.out
    aten::upsample_bilinear2d aten::upsample_bilinear2d.out aten::upsample_bilinear2d_backward
    aten::upsample_bilinear2d_backward.grad_input aten::upsample_nearest2d aten::upsample_nearest2d.out
    aten::upsample_nearest2d_backward aten::upsample_nearest2d_backward.grad_input aten::upsample_trilinear3d
    aten::var.correction aten::var.correction_out aten::var_mean.correction aten::var_mean.correction_out aten::view
    aten::view_as_complex_copy aten::view_as_complex_copy.out aten::view_as_real_copy aten::view_as_real_copy.out
    aten::view_copy aten::view_copy.out aten::where.self aten::where.self_out aten::xlogy.OutTensor
    aten::xlogy.Tensor aten::xlogy_.Tensor aten::zero_
""".split()
)
