// SPDX-License-Identifier: Apache-2.0
// ats_nand_store: sparse, file-backed flash array of one simulated NAND die; see ats_nand_store.h
// and README.md. Plain C++17, no Verilator headers: it links into a cocotb (Verilator) build and
// into a plain C++ harness alike.
#include "ats_nand_store.h"

#ifdef VERILATOR
#include "verilated.h"
#endif

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>
#include <map>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

struct Die {
    int id, planes, blocks, ppb, page_bytes, spare_bytes, row_bytes;
    int bad_ppm, pfail_ppm, efail_ppm, flip_ppb;
    std::mt19937_64 pfail_rng, efail_rng, flip_rng, tear_rng;
    std::unordered_map<uint32_t, std::vector<uint8_t>> pages;  // row -> page + spare (programmed only)
    std::vector<int> next_page;                                 // per block: highest programmed page + 1
    std::vector<uint8_t> factory_bad;                           // per block
    std::vector<uint8_t> reg;                                   // page register
    std::string image;
    FILE *journal = nullptr;                                    // <image>.log: every change since the image
    std::string refused;                                        // why the image file was refused ("" = not refused)
    double busy_until = -1;                                     // array operation ends (ns; < 0: idle): ATS_SIM_SKIP
};

std::map<int, Die *> &registry() {
    static std::map<int, Die *> r;
    return r;
}

Die *D(void *h) { return static_cast<Die *>(h); }

bool chance(std::mt19937_64 &rng, uint64_t rate, uint64_t scale) {
    if (rate == 0) return false;
    return (rng() % scale) < rate;
}

void recompute_order(Die *d) {
    std::fill(d->next_page.begin(), d->next_page.end(), 0);
    for (auto &kv : d->pages) {
        int b = int(kv.first) / d->ppb, p = int(kv.first) % d->ppb;
        if (b < d->blocks && p + 1 > d->next_page[b]) d->next_page[b] = p + 1;
    }
}

void mark_factory_bad(Die *d, int b) {
    std::vector<uint8_t> pg(d->row_bytes, 0x00);  // marker: first spare byte of page 0 != 0xFF
    d->pages[uint32_t(b) * d->ppb] = pg;
    d->factory_bad[b] = 1;
    if (d->next_page[b] < 1) d->next_page[b] = 1;
}

// ---- the journal (<image>.log): every change to the array since the image was written, one record
// per change, flushed to the OS at once, so a simulator killed at any instant (SIGKILL, a host that
// goes away) loses nothing: the next power-on loads the image and replays the journal. Header:
// "ATSJNL1\0", then the identity of the image it continues (u64 inode, u64 size, i64 mtime in ns;
// all 0 for no image file). Records: 'P' u32 row, row_bytes bytes (the page's new content: a
// program, a torn page, a page of a torn block); 'E' u32 block (erased). A journal whose header
// does not name the image now on disk (the image was rewritten by a save, by Python, by a copy, or
// deleted) is stale: it is discarded, never replayed. A record cut short by a kill is dropped and
// cut off the file.
struct ImageId {
    uint64_t ino, size;
    int64_t mtime_ns;
};

ImageId image_id(const std::string &path) {
    struct stat st;
    if (stat(path.c_str(), &st) != 0) return {0, 0, 0};
    return {uint64_t(st.st_ino), uint64_t(st.st_size), int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
}

const char JOURNAL_MAGIC[8] = {'A', 'T', 'S', 'J', 'N', 'L', '1', 0};

// a new, empty journal for the image on disk now (after a save, or instead of a stale one)
void journal_start(Die *d) {
    if (d->journal) std::fclose(d->journal);
    d->journal = std::fopen((d->image + ".log").c_str(), "wb");
    if (!d->journal) {
        std::fprintf(stderr, "ats_nand_store: die %d: cannot write journal %s.log: changes are not journaled\n",
                     d->id, d->image.c_str());
        return;
    }
    ImageId id = image_id(d->image);
    std::fwrite(JOURNAL_MAGIC, 1, 8, d->journal);
    std::fwrite(&id, sizeof id, 1, d->journal);
    std::fflush(d->journal);
}

void journal_page(Die *d, uint32_t row) {
    if (!d->journal) return;
    const std::vector<uint8_t> &pg = d->pages[row];
    std::fputc('P', d->journal);
    std::fwrite(&row, 4, 1, d->journal);
    std::fwrite(pg.data(), 1, pg.size(), d->journal);
    std::fflush(d->journal);
}

void journal_erase(Die *d, uint32_t block) {
    if (!d->journal) return;
    std::fputc('E', d->journal);
    std::fwrite(&block, 4, 1, d->journal);
    std::fflush(d->journal);
}

// At power-on, after the image (if any) was loaded: replays <image>.log if it continues that image
// (a torn last record is cut off the file) and appends to it from then on; otherwise (no journal,
// a stale one, a foreign file) starts a new one. Returns the records replayed.
int journal_resume(Die *d) {
    if (d->journal) {
        std::fclose(d->journal);
        d->journal = nullptr;
    }
    std::string path = d->image + ".log";
    FILE *f = std::fopen(path.c_str(), "rb");
    char magic[8];
    ImageId id{}, now = image_id(d->image);
    if (!f || std::fread(magic, 1, 8, f) != 8 || std::memcmp(magic, JOURNAL_MAGIC, 8) != 0 ||
        std::fread(&id, sizeof id, 1, f) != 1 || id.ino != now.ino || id.size != now.size ||
        id.mtime_ns != now.mtime_ns) {
        if (f) std::fclose(f);
        journal_start(d);
        return 0;
    }
    int n = 0;
    long good = std::ftell(f);
    for (;;) {
        int c = std::fgetc(f);
        uint32_t v;
        if (c == EOF || std::fread(&v, 4, 1, f) != 1) break;
        if (c == 'P') {
            std::vector<uint8_t> pg(d->row_bytes);
            if (std::fread(pg.data(), 1, pg.size(), f) != pg.size()) break;
            if (v / uint32_t(d->ppb) < uint32_t(d->blocks)) d->pages[v] = std::move(pg);
        } else if (c == 'E') {
            for (int p = 0; p < d->ppb; p++) d->pages.erase(v * uint32_t(d->ppb) + uint32_t(p));
        } else {
            break;
        }
        n++;
        good = std::ftell(f);
    }
    std::fseek(f, 0, SEEK_END);
    long end = std::ftell(f);
    std::fclose(f);
    if (end != good && truncate(path.c_str(), good) != 0)
        std::fprintf(stderr, "ats_nand_store: die %d: cannot cut the torn tail of %s\n", d->id, path.c_str());
    recompute_order(d);
    d->journal = std::fopen(path.c_str(), "ab");
    if (!d->journal)
        std::fprintf(stderr, "ats_nand_store: die %d: cannot append to journal %s: changes are not journaled\n",
                     d->id, path.c_str());
    return n;
}

// why the last ats_nand_load failed (the image refused at power-on says it)
thread_local std::string g_load_error;

// power-on (and open): the image if there is one, then the journal. An image file that exists but
// does not load (magic, version, geometry, short) is refused: the die keeps no file from then on
// (no journal, no save: the file and its journal stay as they are) and ats_nand_image_error says
// why; the SystemVerilog die stops the simulation with $fatal.
void power_on_load(Die *d) {
    FILE *f = std::fopen(d->image.c_str(), "rb");
    d->refused.clear();
    if (f) {
        std::fclose(f);
        if (ats_nand_load(d, d->image.c_str()) != 0) {
            d->refused = "die " + std::to_string(d->id) + ": image " + d->image + " refused: " + g_load_error +
                         " (the file and its journal are left unchanged)";
            std::fprintf(stderr, "ats_nand_store: %s\n", d->refused.c_str());
            if (d->journal) {
                std::fclose(d->journal);
                d->journal = nullptr;
            }
            return;
        }
    }
    journal_resume(d);
}

void random_page(Die *d, std::vector<uint8_t> &pg) {
    for (auto &x : pg) x = uint8_t(d->tear_rng());
}

uint16_t onfi_crc16(const uint8_t *p, int n) {
    uint16_t crc = 0x4F4E;
    for (int i = 0; i < n; i++) {
        crc ^= uint16_t(p[i]) << 8;
        for (int k = 0; k < 8; k++) crc = (crc & 0x8000) ? uint16_t((crc << 1) ^ 0x8005) : uint16_t(crc << 1);
    }
    return crc;
}

}  // namespace

extern "C" {

void *ats_nand_open(int die_id, int planes, int blocks, int pages_per_block, int page_bytes,
                    int spare_bytes, int bad_ppm, int bad_seed, int pfail_ppm, int pfail_seed,
                    int efail_ppm, int efail_seed, int flip_ppb, int flip_seed, int tear_seed,
                    const char *image) {
    // environment overrides (tests and harnesses that cannot pass parameters or plusargs):
    //   ATS_NAND_FAULTS="bad_ppm=N,pfail_ppm=N,efail_ppm=N,flip_ppb=N,seed=N" (seed offsets all seeds)
    //   ATS_NAND_IMAGE_<die_id>=path (used when no plusarg gave one)
    std::string img = image ? image : "";
    if (img.empty()) {
        const char *e = std::getenv(("ATS_NAND_IMAGE_" + std::to_string(die_id)).c_str());
        if (e) img = e;
    }
    if (const char *f = std::getenv("ATS_NAND_FAULTS")) {
        std::string s(f);
        size_t pos = 0;
        while (pos < s.size()) {
            size_t end = s.find(',', pos);
            if (end == std::string::npos) end = s.size();
            std::string kv = s.substr(pos, end - pos);
            size_t eq = kv.find('=');
            if (eq != std::string::npos) {
                std::string k = kv.substr(0, eq);
                int v = std::atoi(kv.c_str() + eq + 1);
                if (k == "bad_ppm") bad_ppm = v;
                else if (k == "pfail_ppm") pfail_ppm = v;
                else if (k == "efail_ppm") efail_ppm = v;
                else if (k == "flip_ppb") flip_ppb = v;
                else if (k == "seed") {
                    bad_seed += v; pfail_seed += v; efail_seed += v; flip_seed += v; tear_seed += v;
                }
            }
            pos = end + 1;
        }
    }
    Die *d = new Die();
    d->id = die_id;
    d->planes = planes;
    d->blocks = blocks;
    d->ppb = pages_per_block;
    d->page_bytes = page_bytes;
    d->spare_bytes = spare_bytes;
    d->row_bytes = page_bytes + spare_bytes;
    d->bad_ppm = bad_ppm;
    d->pfail_ppm = pfail_ppm;
    d->efail_ppm = efail_ppm;
    d->flip_ppb = flip_ppb;
    // every die its own fault sequences: the dies of one design share the *_SEED parameters, and
    // identical sequences would make all dies fail the same program numbers
    const uint64_t mix = uint64_t(uint32_t(die_id)) * 0xD1B54A32D192ED03ull;
    d->pfail_rng.seed((uint64_t(pfail_seed) * 0x9E3779B97F4A7C15ull + 1) ^ mix);
    d->efail_rng.seed((uint64_t(efail_seed) * 0x9E3779B97F4A7C15ull + 2) ^ mix);
    d->flip_rng.seed((uint64_t(flip_seed) * 0x9E3779B97F4A7C15ull + 3) ^ mix);
    d->tear_rng.seed((uint64_t(tear_seed) * 0x9E3779B97F4A7C15ull + 4) ^ mix);
    d->next_page.assign(blocks, 0);
    d->factory_bad.assign(blocks, 0);
    d->reg.assign(d->row_bytes, 0xFF);
    d->image = img;
    // factory bad blocks (block 0 is guaranteed good, as ONFI requires)
    std::mt19937_64 bad_rng((uint64_t(bad_seed) * 0x9E3779B97F4A7C15ull + 5) ^ mix);
    for (int b = 1; b < blocks; b++)
        if (chance(bad_rng, uint64_t(bad_ppm), 1000000)) mark_factory_bad(d, b);
    if (!d->image.empty()) power_on_load(d);
    registry()[die_id] = d;
    return d;
}

void ats_nand_close(void *h) {
    Die *d = D(h);
    auto &r = registry();
    auto it = r.find(d->id);
    if (it != r.end() && it->second == d) r.erase(it);
    if (d->journal) std::fclose(d->journal);
    delete d;
}

void *ats_nand_handle(int die_id) {
    auto &r = registry();
    auto it = r.find(die_id);
    return it == r.end() ? nullptr : it->second;
}

void ats_nand_busy_until(void *h, double t) { D(h)->busy_until = t; }

double ats_nand_next_busy_end(void) {
    double t = -1;
    for (auto &kv : registry())
        if (kv.second->busy_until >= 0 && (t < 0 || kv.second->busy_until < t)) t = kv.second->busy_until;
    return t;
}

void ats_nand_reg_fill(void *h) { std::fill(D(h)->reg.begin(), D(h)->reg.end(), 0xFF); }

int ats_nand_reg_get(void *h, int col) {
    Die *d = D(h);
    return (col >= 0 && col < d->row_bytes) ? d->reg[col] : 0xFF;
}

void ats_nand_reg_set(void *h, int col, int value) {
    Die *d = D(h);
    if (col >= 0 && col < d->row_bytes) d->reg[col] = uint8_t(value);
}

int ats_nand_read_page(void *h, int row) {
    Die *d = D(h);
    auto it = d->pages.find(uint32_t(row));
    if (it == d->pages.end())
        std::fill(d->reg.begin(), d->reg.end(), 0xFF);
    else
        d->reg = it->second;
    if (d->flip_ppb <= 0) return 0;
    // Bernoulli flips per bit, drawn by geometric skips (cheap at low rates)
    double p = double(d->flip_ppb) / 1e9;
    std::geometric_distribution<long> skip(p);
    long nbits = long(d->row_bytes) * 8, pos = skip(d->flip_rng);
    int flips = 0;
    while (pos < nbits) {
        d->reg[pos / 8] ^= uint8_t(1u << (pos % 8));
        flips++;
        pos += 1 + skip(d->flip_rng);
    }
    return flips;
}

int ats_nand_program(void *h, int row) {
    Die *d = D(h);
    int b = row / d->ppb, p = row % d->ppb;
    int res = 0;
    if (b >= d->blocks) return ATS_NAND_FAIL;
    if (d->factory_bad[b]) return ATS_NAND_FAIL;  // bad blocks do not take programs
    auto it = d->pages.find(uint32_t(row));
    if (it != d->pages.end()) res |= ATS_NAND_NOT_ERASED;
    else if (p < d->next_page[b]) res |= ATS_NAND_OUT_OF_ORDER;
    std::vector<uint8_t> pg(d->row_bytes, 0xFF);
    if (it != d->pages.end()) pg = it->second;
    for (int i = 0; i < d->row_bytes; i++) pg[i] &= d->reg[i];  // programming only clears bits
    if (chance(d->pfail_rng, uint64_t(d->pfail_ppm), 1000000)) {
        // failed program: the page is unreliable (many bits wrong)
        for (auto &x : pg)
            if ((d->tear_rng() & 3) == 0) x ^= uint8_t(d->tear_rng() | 1);
        res |= ATS_NAND_FAIL;
    }
    d->pages[uint32_t(row)] = pg;
    if (p + 1 > d->next_page[b]) d->next_page[b] = p + 1;
    journal_page(d, uint32_t(row));
    static const bool trace = std::getenv("ATS_NAND_TRACE") != nullptr;   // debugging: every program
    if (trace) std::fprintf(stderr, "ats_nand_store: die %d PROGRAM block %d page %d -> %d\n", d->id, b, p, res);
    return res;
}

int ats_nand_erase(void *h, int block) {
    Die *d = D(h);
    if (block >= d->blocks) return ATS_NAND_FAIL;
    if (d->factory_bad[block]) return ATS_NAND_FAIL;  // the mark stays
    if (chance(d->efail_rng, uint64_t(d->efail_ppm), 1000000)) {
        ats_nand_tear_block(h, block);
        return ATS_NAND_FAIL;
    }
    for (int p = 0; p < d->ppb; p++) d->pages.erase(uint32_t(block) * d->ppb + p);
    d->next_page[block] = 0;
    journal_erase(d, uint32_t(block));
    return 0;
}

void ats_nand_tear_page(void *h, int row) {
    Die *d = D(h);
    int b = row / d->ppb, p = row % d->ppb;
    if (b >= d->blocks || d->factory_bad[b]) return;
    std::vector<uint8_t> pg(d->row_bytes);
    random_page(d, pg);
    d->pages[uint32_t(row)] = pg;
    if (p + 1 > d->next_page[b]) d->next_page[b] = p + 1;
    journal_page(d, uint32_t(row));
}

void ats_nand_tear_block(void *h, int block) {
    Die *d = D(h);
    if (block >= d->blocks || d->factory_bad[block]) return;
    // indeterminate: every page holds random bits (some partly erased), none is usable
    for (int p = 0; p < d->ppb; p++) {
        std::vector<uint8_t> pg(d->row_bytes);
        random_page(d, pg);
        if (d->tear_rng() & 1)
            for (auto &x : pg) x |= uint8_t(d->tear_rng());  // partly erased: more ones
        d->pages[uint32_t(block) * d->ppb + p] = pg;
        journal_page(d, uint32_t(block) * d->ppb + p);
    }
    d->next_page[block] = d->ppb;
}

int ats_nand_param_byte(void *h, int idx) {
    Die *d = D(h);
    uint8_t pp[256];
    std::memset(pp, 0, sizeof pp);
    auto put = [&](int off, uint64_t v, int n) {
        for (int i = 0; i < n; i++) pp[off + i] = uint8_t(v >> (8 * i));
    };
    std::memcpy(pp, "ONFI", 4);
    put(4, 0x0002, 2);                 // revision: ONFI 1.0
    put(6, 0x0000, 2);                 // features: 8-bit bus, no multi-LUN / cache
    put(8, 0x0000, 2);                 // optional commands: none beyond the mandatory set
    std::memcpy(pp + 32, "ATOMSSD     ", 12);
    char model[21];
    std::snprintf(model, sizeof model, "ATS-NAND-SIM%-8d", d->id);
    std::memcpy(pp + 44, model, 20);
    pp[64] = 0xA7;                     // JEDEC manufacturer id (same as READ ID byte 0)
    put(80, uint64_t(d->page_bytes), 4);
    put(84, uint64_t(d->spare_bytes), 2);
    put(86, uint64_t(d->page_bytes), 4);  // partial page = full page (one program per page)
    put(90, uint64_t(d->spare_bytes), 2);
    put(92, uint64_t(d->ppb), 4);
    put(96, uint64_t(d->blocks), 4);
    pp[100] = 1;                       // LUNs per target
    pp[101] = 0x23;                    // address cycles: 2 column (7:4), 3 row (3:0)
    pp[102] = 1;                       // bits per cell
    put(103, uint64_t(d->blocks / 50 + 1), 2);  // max bad blocks per LUN
    put(105, 0x0301, 2);               // endurance: 1 x 10^3
    pp[107] = 1;                       // guaranteed valid blocks at target start
    pp[110] = 1;                       // programs per page
    pp[112] = 0xFF;                    // ECC bits: 0xFF = see extended (left to the controller)
    int ilv = 0;
    while ((1 << ilv) < d->planes) ilv++;
    pp[113] = uint8_t(ilv);            // interleaved (plane) address bits
    pp[114] = 0;
    put(129, 0x0001, 2);               // timing mode 0
    put(254, onfi_crc16(pp, 254), 2);
    return pp[((idx % 768) + 768) % 768 % 256];
}

void ats_nand_power(void *h, int on) {
    Die *d = D(h);
    if (d->image.empty()) return;
    if (!on) {
        if (!d->refused.empty()) return;  // never overwrite an image that was refused
        if (ats_nand_save(h, d->image.c_str()) != 0)
            std::fprintf(stderr, "ats_nand_store: die %d: cannot save image %s\n", d->id, d->image.c_str());
    } else {
        power_on_load(d);
    }
}

// Image: "ATSNAND1", 6 x u32 geometry, u32 page count, then (u32 row, row_bytes bytes) per page,
// then one byte per block (factory bad). Little-endian host order (x86/ARM).
int ats_nand_save(void *h, const char *path) {
    Die *d = D(h);
    if (!d->refused.empty() && path == d->image) return -1;   // a refused image is never overwritten
    std::string tmp = std::string(path) + ".tmp";
    FILE *f = std::fopen(tmp.c_str(), "wb");
    if (!f) return -1;
    uint32_t hdr[7] = {uint32_t(d->planes), uint32_t(d->blocks), uint32_t(d->ppb), uint32_t(d->page_bytes),
                       uint32_t(d->spare_bytes), 1u, uint32_t(d->pages.size())};
    std::fwrite("ATSNAND1", 1, 8, f);
    std::fwrite(hdr, sizeof hdr, 1, f);
    std::map<uint32_t, const std::vector<uint8_t> *> sorted;
    for (auto &kv : d->pages) sorted[kv.first] = &kv.second;
    for (auto &kv : sorted) {
        std::fwrite(&kv.first, 4, 1, f);
        std::fwrite(kv.second->data(), 1, kv.second->size(), f);
    }
    std::fwrite(d->factory_bad.data(), 1, d->factory_bad.size(), f);
    int err = std::ferror(f);
    std::fclose(f);
    if (err) return -1;
    if (std::rename(tmp.c_str(), path) != 0) return -1;
    // the image holds everything: a new journal continues it (the old one names the old image)
    if (!d->image.empty() && path == d->image) journal_start(d);
    return 0;
}

// Returns 0, or (nothing of the die changed) -1 the file cannot be opened, -2 not an image (magic),
// -3 ends early, -4 a format version other than 1, -5 another geometry; g_load_error says which.
int ats_nand_load(void *h, const char *path) {
    Die *d = D(h);
    FILE *f = std::fopen(path, "rb");
    g_load_error.clear();
    if (!f) {
        g_load_error = "cannot open it";
        return -1;
    }
    char magic[8];
    uint32_t hdr[7];
    auto fail = [&](int code, const std::string &why) {
        std::fclose(f);
        g_load_error = why;
        return code;
    };
    if (std::fread(magic, 1, 8, f) != 8 || std::memcmp(magic, "ATSNAND1", 8) != 0)
        return fail(-2, "not a die image (the magic is not ATSNAND1)");
    if (std::fread(hdr, sizeof hdr, 1, f) != 1) return fail(-3, "the file ends in its header");
    if (hdr[5] != 1u) return fail(-4, "format version " + std::to_string(hdr[5]) + ", this die reads version 1");
    const uint32_t want[5] = {uint32_t(d->planes), uint32_t(d->blocks), uint32_t(d->ppb), uint32_t(d->page_bytes),
                              uint32_t(d->spare_bytes)};
    if (std::memcmp(hdr, want, sizeof want) != 0) {
        auto geo = [](const uint32_t *g) {
            return "planes " + std::to_string(g[0]) + ", blocks " + std::to_string(g[1]) + ", pages/block " +
                   std::to_string(g[2]) + ", page " + std::to_string(g[3]) + " + spare " + std::to_string(g[4]);
        };
        return fail(-5, "its geometry (" + geo(hdr) + ") is not the die's (" + geo(want) + ")");
    }
    std::unordered_map<uint32_t, std::vector<uint8_t>> pages;
    for (uint32_t i = 0; i < hdr[6]; i++) {
        uint32_t row;
        std::vector<uint8_t> pg(d->row_bytes);
        if (std::fread(&row, 4, 1, f) != 1 || std::fread(pg.data(), 1, pg.size(), f) != pg.size())
            return fail(-3, "the file ends in page record " + std::to_string(i) + " of " + std::to_string(hdr[6]));
        pages[row] = std::move(pg);
    }
    std::vector<uint8_t> bad(d->blocks);
    if (std::fread(bad.data(), 1, bad.size(), f) != bad.size())
        return fail(-3, "the file ends in the factory-bad flags");
    std::fclose(f);
    d->pages = std::move(pages);
    d->factory_bad = std::move(bad);
    recompute_order(d);
    return 0;
}

static int g_forgiven = 0;  // die $errors made non-fatal and not yet taken off the error count

void ats_nand_error_nonfatal(void) {
    g_forgiven++;
#ifdef VERILATOR
    // the die's next $error must not end the run: allow one more error than have been counted,
    // so any other module's $error still stops the simulation as usual
    VerilatedContext *c = Verilated::threadContextp();
    if (c->errorLimit() < c->errorCount() + 2) c->errorLimit(c->errorCount() + 2);
#endif
}

void ats_nand_error_forgive(void) {
#ifdef VERILATOR
    // at the end of the run: the die's violations are counted in viol_count (the test checks it);
    // they must not also make the simulator exit non-zero. Other errors still do.
    VerilatedContext *c = Verilated::threadContextp();
    int n = c->errorCount() - g_forgiven;
    c->errorCount(n < 0 ? 0 : n);
#endif
    g_forgiven = 0;
}

int ats_nand_viol_mode(int dflt) {
    const char *e = std::getenv("ATS_NAND_VIOL");
    if (e == nullptr || *e == '\0') return dflt;
    std::string v(e);
    if (v == "stop" || v == "2") return 2;
    if (v == "count" || v == "1") return 1;
    if (v == "quiet" || v == "0") return 0;
    std::fprintf(stderr, "ats_nand: ATS_NAND_VIOL=%s not one of stop|count|quiet: using stop\n", e);
    return 2;
}

int ats_nand_pages_stored(void *h) { return int(D(h)->pages.size()); }

const char *ats_nand_image_error(void *h) { return D(h)->refused.c_str(); }

int ats_nand_is_factory_bad(void *h, int block) {
    Die *d = D(h);
    return (block >= 0 && block < d->blocks) ? d->factory_bad[block] : 0;
}

}  // extern "C"
