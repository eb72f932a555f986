/* SPDX-License-Identifier: Apache-2.0 */
/* atomssd firmware start-up: stack at the top of SRAM, the board's early init (ats_board_init: a
   board's DDR3 initialisation, soc/boards/fw; nothing in the simulation), .data copied from ROM,
   .bss cleared, interrupts stay off (the firmware polls). */
    .section .text.start, "ax"
    .global _start
_start:
    la   sp, _fstack
    call ats_board_init
    la   t0, _fdata
    la   t1, _edata
    la   t2, _fdata_rom
1:  bgeu t0, t1, 2f
    lw   t3, 0(t2)
    sw   t3, 0(t0)
    addi t0, t0, 4
    addi t2, t2, 4
    j    1b
2:  la   t0, _fbss
    la   t1, _ebss
3:  bgeu t0, t1, 4f
    sw   zero, 0(t0)
    addi t0, t0, 4
    j    3b
4:  call main
5:  j    5b

/* the default early init: nothing (a board's firmware links a strong one, soc/boards/build.py) */
    .section .text.ats_board_init, "ax"
    .weak ats_board_init
ats_board_init:
    ret
