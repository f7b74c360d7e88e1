// The sending task of a lane (TxTask, tx_task.cpp): the frames of one lane of a flow at its
// share of the flow's rate, built a burst at a time.
#pragma once
#include <memory>

#include "dataplane/runtime.hpp"

namespace xlp {

std::unique_ptr<Task> make_tx_task(Flow& flow, Lane& lane, TrialControl& ctl, BurstIo& io, rte_mempool* pool);

}  // namespace xlp
