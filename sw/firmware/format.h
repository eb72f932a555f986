// SPDX-License-Identifier: Apache-2.0
// atomssd firmware: format of a blank device (README "Boot"; docs/persistence.md section 5).
#pragma once
#include "fw.h"

// factory bad-block scan, the checkpoint blocks, the blank check, the first checkpoint.
// ATS_E_NOTBLANK: a good block holds data (nothing erased); ATS_E_NAND: no two good checkpoint blocks
int format_device(void);
