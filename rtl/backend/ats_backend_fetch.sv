// SPDX-License-Identifier: Apache-2.0
// ats_backend_fetch: the backend's page-fetch DMA (rtl/backend/README.md "Page fetch (DMA)"). When
// the NAND subsystem asks for a page (s_nfetch {chan, slot}: slot = table entry, or WIN = the
// firmware's NPROG page), the channel's fetch queue (2 deep) takes it; one word a cycle, round
// robin over the channels that have a fetch and room in their 4-word output FIFO, is read from the
// staging memory (latency 2) or generated (a TRIM record's zeros and the five spare words), and
// pushed to that channel's m_ndata stream. Pipeline: stage 0 picks the channel (room = FIFO
// occupancy + words in the pipeline < 4, 4-bit arithmetic); stage p0 sends the memory address from
// the registered pick; stage 1 builds the generated word from the registered entry and word index
// (the backend answers meta_e / meta_fw with the page's fields); stage 2 pushes.
`resetall
`timescale 1ns / 1ps
`default_nettype none

module ats_backend_fetch #(
    parameter int NUM_CHAN   = 4,      // NAND channels, 1..8
    parameter int PAGE_BYTES = 4096,   // data bytes per page
    parameter int WIN        = 8       // request table entries; slot WIN = the firmware's page
) (
    input  wire logic                            clk,
    input  wire logic                            rst,            // synchronous, active high
    // page requests of the NAND subsystem
    input  wire logic                            s_nfetch_valid,
    output wire logic                            s_nfetch_ready,
    input  wire logic [2:0]                      s_nfetch_chan,
    input  wire logic [7:0]                      s_nfetch_slot,
    // page words per channel
    output wire logic [NUM_CHAN-1:0]             m_ndata_valid,
    input  wire logic [NUM_CHAN-1:0]             m_ndata_ready,
    output wire logic [NUM_CHAN*32-1:0]          m_ndata_data,
    output wire logic [NUM_CHAN-1:0]             m_ndata_last,
    // staging memory (table entries) and the firmware's page memory, read latency 2
    output wire logic [$clog2(WIN*PAGE_BYTES/4)-1:0] mem_ra,
    input  wire logic [31:0]                     mem_rd,
    output wire logic [$clog2(PAGE_BYTES/4)-1:0] fw_ra,
    input  wire logic [31:0]                     fw_rd,
    // the spare words of the page in stage 1: entry meta_e (or the firmware's page: meta_fw)
    output wire logic [$clog2(WIN)-1:0]          meta_e,
    output wire logic                            meta_fw,
    input  wire logic                            meta_zero,      // no data: zeros (TRIM / tx record)
    input  wire logic [31:0]                     meta_lpn,
    input  wire logic [63:0]                     meta_seq,
    input  wire logic [31:0]                     meta_epoch,     // (a RELOC: the page it relocates)
    input  wire logic [31:0]                     meta_info       // {8'h00, flags, 6'd0, kind, 2'b00, txid}
);
    localparam int CH_W   = (NUM_CHAN > 1) ? $clog2(NUM_CHAN) : 1;
    localparam int PW     = PAGE_BYTES / 4;             // data words per page
    localparam int PWW    = $clog2(PW + 5) + 1;          // word counter incl. metadata words
    localparam int WIN_W  = $clog2(WIN);
    localparam int MEM_AW = $clog2(WIN * PW);
    localparam int FW_AW  = $clog2(PW);

    // fetch DMA: per channel a fetch queue of 2 and an output FIFO of 4 words; one word a cycle
    // read from the staging memory (or generated) for the channel chosen round robin.
    localparam int OFD = 4;
    logic               fq_v   [NUM_CHAN][2];
    logic [WIN_W:0]     fq_ent [NUM_CHAN][2];    // table entry, or WIN = the firmware's NPROG page
    logic [PWW-1:0]     fq_w   [NUM_CHAN];       // next word of the head fetch
    logic [31:0]        of_mem [NUM_CHAN][OFD];
    logic               of_last[NUM_CHAN][OFD];
    logic [2:0]         of_rd  [NUM_CHAN], of_wr [NUM_CHAN];
    logic [2:0]         of_pend[NUM_CHAN];       // words in flight in the read pipeline
    logic [2:0]         dch_q;                   // round-robin pointer
    // read pipeline: stage 0 picks a channel; stage p0 (registered pick) issues the memory
    // address (the pick -> address path crossed the device: c690592's critical path); stage 1
    // builds the spare words / zeros; stage 2 (memory data) pushes into the channel's FIFO
    logic               p0_v_q, p0_fw_q;
    logic [2:0]         p0_ch_q;
    logic [WIN_W-1:0]   p0_e_q;
    logic [PWW-1:0]     p0_w_q;
    logic               p1_v_q, p2_v_q;
    logic [2:0]         p1_ch_q, p2_ch_q;
    logic               p2_ram_q, p2_last_q, p1_fw_q, p2_fw_q;
    logic [WIN_W-1:0]   p1_e_q;
    logic [PWW-1:0]     p1_w_q;
    logic [31:0]        p2_val_q;

    logic               f_pick;
    logic [2:0]         f_ch;
    logic [WIN_W:0]     f_ent;
    logic               f_fw;             // the firmware's page
    logic [WIN_W-1:0]   f_e;              // table entry (f_ent when not f_fw)
    logic [PWW-1:0]     f_w;
    logic               g_ram;            // stage 1: word from the memory (else g_val)
    logic [31:0]        g_val;
    logic               g_last;
    always_comb begin
        f_pick = 1'b0;
        f_ch   = 3'd0;
        for (int k = NUM_CHAN - 1; k >= 0; k--) begin
            logic [CH_W-1:0] c;
            c = CH_W'((32'(dch_q) + k) % NUM_CHAN);
            // room in the 4-word output FIFO for one more word (occupancy + words in the pipeline,
            // both at most 4: 4-bit arithmetic, no wide compare on this path)
            if (fq_v[c][0] && (4'(3'(of_wr[c] - of_rd[c])) + 4'(of_pend[c])) < 4'(OFD)) begin
                f_pick = 1'b1;
                f_ch   = 3'(c);
            end
        end
        f_ent  = fq_ent[CH_W'(f_ch)][0];
        f_fw   = 32'(f_ent) == WIN;
        f_e    = WIN_W'(f_ent);
        f_w    = fq_w[CH_W'(f_ch)];
    end
    assign mem_ra = MEM_AW'(32'(p0_e_q) * 32'(PW) + ((32'(p0_w_q) < PW) ? 32'(p0_w_q) : 32'd0));
    assign fw_ra  = FW_AW'((32'(p0_w_q) < PW) ? 32'(p0_w_q) : 32'd0);
    // stage 1: from the registered entry and word (the entry's fields do not change while it is
    // fetched: written at acceptance, flags at issue, before the NAND asks for the data); the
    // backend selects the page's fields (meta_*) by the registered entry (meta_e, meta_fw)
    assign meta_e  = p1_e_q;
    assign meta_fw = p1_fw_q;
    always_comb begin
        g_ram  = 1'b0;
        g_val  = 32'd0;
        g_last = 1'b0;
        if (32'(p1_w_q) < PW) begin
            g_ram = !meta_zero;                   // a TRIM / commit / abort record carries zeros
        end else begin
            case (32'(p1_w_q) - PW)
                0: g_val = meta_lpn;
                1: g_val = meta_seq[31:0];
                2: g_val = meta_seq[63:32];
                3: g_val = meta_epoch;
                default: begin
                    g_val  = meta_info;
                    g_last = 1'b1;
                end
            endcase
        end
    end
    assign s_nfetch_ready = !rst && 32'(s_nfetch_chan) < NUM_CHAN && !fq_v[CH_W'(s_nfetch_chan)][1];
    for (genvar c = 0; c < NUM_CHAN; c++) begin : g_nd
        assign m_ndata_valid[c]       = of_wr[c] != of_rd[c];
        assign m_ndata_data[c*32 +: 32] = of_mem[c][of_rd[c][1:0]];
        assign m_ndata_last[c]        = of_last[c][of_rd[c][1:0]];
    end

    always_ff @(posedge clk) begin
        if (rst) begin
            for (int c = 0; c < NUM_CHAN; c++) begin
                fq_v[c][0] <= 1'b0; fq_v[c][1] <= 1'b0; fq_w[c] <= '0;
                of_rd[c] <= 3'd0; of_wr[c] <= 3'd0; of_pend[c] <= 3'd0;
            end
            dch_q <= 3'd0;
            p0_v_q <= 1'b0; p1_v_q <= 1'b0; p2_v_q <= 1'b0;
        end else begin
            // pipeline
            p2_v_q <= p1_v_q; p2_ch_q <= p1_ch_q; p2_ram_q <= g_ram; p2_last_q <= g_last;
            p2_val_q <= g_val; p2_fw_q <= p1_fw_q;
            p1_v_q <= p0_v_q; p1_ch_q <= p0_ch_q; p1_fw_q <= p0_fw_q; p1_e_q <= p0_e_q; p1_w_q <= p0_w_q;
            p0_v_q <= f_pick; p0_ch_q <= f_ch; p0_fw_q <= f_fw; p0_e_q <= f_e; p0_w_q <= f_w;
            for (int c = 0; c < NUM_CHAN; c++) begin
                logic inc, dec;
                inc = f_pick && f_ch == 3'(c);
                dec = p2_v_q && p2_ch_q == 3'(c);
                of_pend[c] <= of_pend[c] + (inc ? 3'd1 : 3'd0) - (dec ? 3'd1 : 3'd0);
                if (dec) begin
                    of_mem[c][of_wr[c][1:0]]  <= p2_ram_q ? (p2_fw_q ? fw_rd : mem_rd) : p2_val_q;
                    of_last[c][of_wr[c][1:0]] <= p2_last_q;
                    of_wr[c] <= of_wr[c] + 3'd1;
                end
                if (m_ndata_valid[c] && m_ndata_ready[c]) of_rd[c] <= of_rd[c] + 3'd1;
                // fetch queue: head advances when its last word is picked
                if (inc) begin
                    if (32'(fq_w[c]) == PW + 4) begin
                        fq_w[c] <= '0;
                        fq_v[c][0] <= fq_v[c][1]; fq_ent[c][0] <= fq_ent[c][1];
                        fq_v[c][1] <= 1'b0;
                    end else begin
                        fq_w[c] <= fq_w[c] + 1'b1;
                    end
                end
                if (s_nfetch_valid && s_nfetch_ready && s_nfetch_chan == 3'(c)) begin
                    // slot = table entry; entry 1 is empty (s_nfetch_ready): joins behind the head,
                    // or becomes the head if the head is empty or leaving this cycle
                    if (!fq_v[c][0] || (inc && 32'(fq_w[c]) == PW + 4)) begin
                        fq_v[c][0] <= 1'b1; fq_ent[c][0] <= (WIN_W+1)'(s_nfetch_slot);
                    end else begin
                        fq_v[c][1] <= 1'b1; fq_ent[c][1] <= (WIN_W+1)'(s_nfetch_slot);
                    end
                end
            end
            if (f_pick) dch_q <= 3'((32'(f_ch) + 1) % NUM_CHAN);
        end
    end

    logic unused;
    assign unused = ^{s_nfetch_slot};     // bits above the entry number
endmodule

`resetall
