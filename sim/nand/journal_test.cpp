// SPDX-License-Identifier: Apache-2.0
// journal_test: the NAND store's journal (<image>.log) without a simulator. Plain C++ against
// ats_nand_store.cpp; the reference is a std::map of the pages this test programmed and erased.
// Checked (sim/nand/README.md "Journal"):
//   1. a store killed (never saved) before its first image comes back from the journal alone;
//   2. after a save, later changes come back from image + journal; a kill between two saves loses
//      nothing;
//   3. a record cut short at the end of the journal is dropped and cut off the file;
//   4. a stale journal (its image rewritten by someone else, or deleted) is discarded, not replayed;
//   5. an erase record empties its block.
// Usage: journal_test <directory>; exit status 0 only if every check passed.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "ats_nand_store.h"

namespace {

constexpr int BLOCKS = 8, PPB = 4, PAGE = 64, SPARE = 8, ROW = PAGE + SPARE;
int failures = 0;

void check(bool ok, const char *what) {
    if (!ok) {
        std::printf("FAIL: %s\n", what);
        failures++;
    }
}

void *open_die(const std::string &img) {
    return ats_nand_open(0, 1, BLOCKS, PPB, PAGE, SPARE, 0, 1, 0, 1, 0, 1, 0, 1, 1, img.c_str());
}

std::vector<uint8_t> page_of(int row, int gen) {
    std::vector<uint8_t> p(ROW);
    for (int i = 0; i < ROW; i++) p[i] = uint8_t(row * 31 + gen * 7 + i);
    return p;
}

void program(void *h, std::map<int, std::vector<uint8_t>> &ref, int row, int gen) {
    std::vector<uint8_t> p = page_of(row, gen);
    for (int i = 0; i < ROW; i++) ats_nand_reg_set(h, i, p[i]);
    check(ats_nand_program(h, row) == 0, "program accepted");
    ref[row] = p;
}

void erase(void *h, std::map<int, std::vector<uint8_t>> &ref, int block) {
    check(ats_nand_erase(h, block) == 0, "erase accepted");
    for (int p = 0; p < PPB; p++) ref.erase(block * PPB + p);
}

// every page of the die against the reference (erased = all 0xFF)
bool same(void *h, const std::map<int, std::vector<uint8_t>> &ref) {
    for (int row = 0; row < BLOCKS * PPB; row++) {
        ats_nand_read_page(h, row);
        auto it = ref.find(row);
        for (int i = 0; i < ROW; i++) {
            int want = it == ref.end() ? 0xFF : it->second[i];
            if (ats_nand_reg_get(h, i) != want) return false;
        }
    }
    return true;
}

long size_of(const std::string &path) {
    struct stat st;
    return stat(path.c_str(), &st) == 0 ? long(st.st_size) : -1;
}

}  // namespace

int main(int argc, char **argv) {
    std::string dir = argc > 1 ? argv[1] : ".";
    std::string img = dir + "/jt.img", log = img + ".log";
    std::remove(img.c_str());
    std::remove(log.c_str());
    std::map<int, std::vector<uint8_t>> ref;

    // 1. no image yet: programs and an erase, then a "kill" (closed without a save)
    void *h = open_die(img);
    for (int r = 0; r < 6; r++) program(h, ref, r, 1);
    erase(h, ref, 1);                                         // rows 4, 5 gone
    program(h, ref, 4, 2);
    ats_nand_close(h);
    h = open_die(img);
    check(size_of(img) < 0, "no image was written by the kill");
    check(same(h, ref), "1: the journal alone restores the die");

    // 2. a save, more changes, a kill
    check(ats_nand_save(h, img.c_str()) == 0, "save");
    long empty = size_of(log);
    check(empty == 32, "2: a save leaves a journal of its header only");
    program(h, ref, 8, 3);
    erase(h, ref, 0);
    program(h, ref, 0, 3);
    ats_nand_close(h);
    h = open_die(img);
    check(same(h, ref), "2: image + journal restore the die");

    // 3. a torn last record: half a page record appended by a kill mid-write
    long before = size_of(log);
    FILE *f = std::fopen(log.c_str(), "ab");
    std::fputc('P', f);
    unsigned row = 9;
    std::fwrite(&row, 4, 1, f);
    std::fwrite(page_of(9, 9).data(), 1, ROW / 2, f);
    std::fclose(f);
    ats_nand_close(h);
    h = open_die(img);
    check(same(h, ref), "3: a torn record is not applied");
    check(size_of(log) == before, "3: the torn record is cut off the journal");
    program(h, ref, 9, 4);                                    // and the journal goes on after it
    ats_nand_close(h);
    h = open_die(img);
    check(same(h, ref), "3: records after the cut replay");

    // 4a. the image rewritten behind the store's back (a copy, Python): its journal is stale
    std::map<int, std::vector<uint8_t>> ref_b;
    std::string other = dir + "/jt_other.img";
    void *g = ats_nand_open(1, 1, BLOCKS, PPB, PAGE, SPARE, 0, 1, 0, 1, 0, 1, 0, 1, 1, "");
    program(g, ref_b, 12, 5);
    check(ats_nand_save(g, other.c_str()) == 0, "save of another die");
    ats_nand_close(g);
    program(h, ref, 13, 6);                                   // journaled against the old image
    ats_nand_close(h);
    check(std::rename(other.c_str(), img.c_str()) == 0, "image replaced");
    h = open_die(img);
    check(same(h, ref_b), "4a: a stale journal is discarded");
    check(size_of(log) == 32, "4a: and replaced by an empty one");

    // 4b. the image deleted: the journal named it, so it is stale too
    program(h, ref_b, 16, 7);
    ats_nand_close(h);
    std::remove(img.c_str());
    h = open_die(img);
    check(ats_nand_pages_stored(h) == 0, "4b: no image and a stale journal: an erased die");
    ats_nand_close(h);

    std::remove(img.c_str());
    std::remove(log.c_str());
    if (failures) {
        std::printf("journal_test: %d check(s) failed\n", failures);
        return 1;
    }
    std::printf("journal_test: all checks passed\n");
    return 0;
}
