// SPDX-License-Identifier: Apache-2.0
// atomssd firmware: recovery at power-on (docs/persistence.md section 6; README "Boot").
#pragma once
#include "fw.h"

// the newest complete checkpoint, the log scan of its plan, the durable prefix, the replay, the
// mapping into the remap engine, a new checkpoint. ATS_E_NOCKPT: no checkpoint (a blank device?)
int recover(void);
