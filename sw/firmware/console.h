// SPDX-License-Identifier: Apache-2.0
// atomssd firmware: the UART console (README "Console"): status, stats, bbt, log, ckpt, gc greedy,
// gc cb, scan N.
#pragma once
#include "fw.h"

// read the UART's pending characters; run each complete line's command
void console(void);
