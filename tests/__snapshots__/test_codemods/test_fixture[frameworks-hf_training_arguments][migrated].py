"""Hugging Face TrainingArguments set up for CUDA GPUs: float16, apex, fused and 8-bit
optimizers, NCCL, TF32, pinned memory, inductor, a CPU switch. [XLA824]"""

from transformers import Seq2SeqTrainingArguments, TrainingArguments


def arguments(args):
    training = TrainingArguments(
        output_dir=args.out,
        per_device_train_batch_size=8,
        bf16=True,
        optim="adamw_torch",
    )
    evaluation = Seq2SeqTrainingArguments(output_dir="eval", bf16_full_eval=True, predict_with_generate=True, optim="adamw_torch")
    # TODO(xla-migrate): XLA824 `optim="adamw_bnb_8bit"` is a bitsandbytes optimizer (CUDA kernels): use `optim="adamw_torch"` (bfloat16 keeps the memory low); `use_cpu=args.cpu` asks for the CPU: transformers trains on the XLA device unless it is set, so drop it there; see https://huggingface.co/docs/transformers/perf_train_tpu
    small = TrainingArguments(output_dir="small", optim="adamw_bnb_8bit", use_cpu=args.cpu)
    # inductor by default: a mode alone turns compiling on
    tuned = TrainingArguments(output_dir="tuned", optim="adamw_torch")
    switched = TrainingArguments(output_dir="switched", optim="adamw_torch")
    return training, evaluation, small, tuned, switched
