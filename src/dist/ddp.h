// DistributedDataParallel, as torch.nn.parallel.DistributedDataParallel: one replica of
// a module per process, kept equal by averaging gradients over a process group.
//   - Construction checks that every rank has the same parameters and buffers (count,
//     dtypes, shapes; an error naming the first mismatch on every rank, not a hang) and
//     broadcasts them from rank 0, so every rank starts equal.
//   - Parameters are grouped into buckets of about bucket_cap bytes in reverse order of
//     registration (the order backward produces their gradients). During backward, each
//     parameter's whole gradient is handed to the reducer (a GradHook on the parameter)
//     the moment the engine has it; a bucket whose gradients are all in is all-reduced
//     (averaged) by a communication thread while backward goes on, buckets strictly in
//     index order on every rank. The engine accumulates the averaged gradients into .grad
//     at the end, all or nothing, as any backward.
//   - find_unused_parameters: a parameter that got no gradient in a pass counts as zero
//     (torch's semantics); without it, such a parameter is an error naming it, raised
//     after the buckets were still reduced so that no rank hangs.
//   - no_sync (torch's `with ddp.no_sync():`, for gradient accumulation): a pass that
//     begins with it set is local: the reducer hands the engine the pass's gradients to
//     add to .grad, launches and checks nothing. A synchronised pass always reduces each
//     parameter's whole gradient, .grad plus its own (torch's reducer reads param.grad
//     after AccumulateGrad), and its averages replace .grad; after zero_grad that is
//     the usual average of this pass's gradients.
//   - The optimizer then steps locally on every rank.
#pragma once
#include <cstddef>

#include "core/refcounted.h"
#include "dist/process_group.h"
#include "nn/module.h"

namespace dt::dist {

constexpr size_t kDefaultBucketCapBytes = 25u << 20;  // torch's bucket_cap_mb=25

nn::Module* new_distributed_data_parallel(const Ref<nn::Module>& module, const Ref<ProcessGroup>& group,
                                          size_t bucket_cap_bytes, bool find_unused_parameters);

// Turns ddp's synchronisation off or on (see above); ddp must be a module made by
// new_distributed_data_parallel, else INVALID_ARGUMENT naming fn.
void set_no_sync(nn::Module& ddp, bool no_sync, const char* fn);

}  // namespace dt::dist
