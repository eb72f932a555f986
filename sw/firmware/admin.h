// SPDX-License-Identifier: Apache-2.0
// atomssd firmware: admin commands from the host (docs/architecture.md section 1.1; README "Admin
// commands"): IDENTIFY, GET_LOG, FEATURE (device settings), and the clean shutdown's checkpoint
// (GET_LOG with tag 0xFF).
#pragma once
#include "fw.h"

// answer a pending admin command (ADM), if any
void admin(void);
