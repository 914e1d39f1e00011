// DataParallel, as torch.nn.DataParallel: forward splits every input along dim 0 over
// the devices (torch.chunk's sizes, so an uneven batch gives a smaller last piece and a
// batch smaller than the device count uses fewer devices), runs one replica of the
// module per piece concurrently (one thread per device, the caller's thread for the
// first), and gathers the outputs on the output device along dim 0 (0-d outputs, such as
// a loss, are stacked into a vector). The module itself serves device_ids[0]; the other
// replicas are copies whose parameters are autograd-tracked copies of the module's, so
// backward sums every replica's gradient into the module's parameters. Replicas are made
// again only when a parameter, buffer or training flag changed since they were made
// (Module::stamp), not on every forward.
#pragma once
#include <vector>

#include "nn/module.h"

namespace dt::nn {

// devices: distinct, existing devices (checked here, DT_ERR_INVALID_DEVICE naming the
// entry); empty means every device of the type the module's parameters are on. output:
// where forward gathers the results, devices[0] when null. The module must sit on
// devices[0] when forward runs (DT_ERR_DEVICE_MISMATCH otherwise, as PyTorch).
Module* new_data_parallel(const Ref<Module>& module, std::vector<Device> devices, const Device* output);

}  // namespace dt::nn
