/* SPDX-License-Identifier: Apache-2.0
 * libatstx: a Linux NVMe namespace through the kernel's passthrough ioctls (an atomssd board
 * behind the in-kernel NVMe driver). The library's SQEs (atstx.c) become struct
 * nvme_passthru_cmd: opcode, NSID, CDW10…15; the kernel owns the queues, CIDs, PRPs, interrupts,
 * timeouts (its nvme io_timeout / admin_timeout) and the controller's state. The ioctl returns the
 * CQE status field without its phase bit: SC 7:0, SCT 10:8, CRD 12:11, M 13, DNR 14.
 * Admin commands (Identify; Set / Get Features of the device's settings, DW0 in `result`) go through
 * NVME_IOCTL_ADMIN_CMD on the same file.
 * Needs CAP_SYS_ADMIN (vendor opcodes are passthrough commands). Built here, run on a board. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/nvme_ioctl.h>

#include "atstx_int.h"

struct lnx {
    int fd;
    uint32_t nsid;                  /* the namespace the device file stands for */
};

static int lnx_exec(ats_dev *dev, int admin, struct ats_sqe *sqe, void *data, uint32_t len, enum ats_dir dir,
                    uint32_t *dw0)
{
    struct lnx *l = dev->priv;
    struct nvme_passthru_cmd c;
    (void)dir;                      /* the kernel takes it from the opcode's low two bits */
    memset(&c, 0, sizeof c);
    c.opcode = (uint8_t)sqe->dw[0];
    c.nsid = sqe->dw[1] ? l->nsid : 0;                 /* the library's NSID 1 is this namespace */
    c.cdw2 = sqe->dw[2];
    c.cdw3 = sqe->dw[3];
    c.addr = (uint64_t)(uintptr_t)data;
    c.data_len = len;
    c.cdw10 = sqe->dw[10];
    c.cdw11 = sqe->dw[11];
    c.cdw12 = sqe->dw[12];
    c.cdw13 = sqe->dw[13];
    c.cdw14 = sqe->dw[14];
    c.cdw15 = sqe->dw[15];
    c.timeout_ms = 0;               /* the kernel's default */
    int r = ioctl(l->fd, admin ? NVME_IOCTL_ADMIN_CMD : NVME_IOCTL_IO_CMD, &c);
    if (r < 0)
        return -errno;
    if (dw0)
        *dw0 = c.result;
    return r & 0x7FF;                                  /* (SCT << 8) | SC */
}

static int lnx_close(ats_dev *dev)
{
    struct lnx *l = dev->priv;
    int st = close(l->fd) ? -errno : 0;
    free(l);
    return st;
}

/* no put_list: the passthrough ioctl maps one data buffer, so SWRITE's range list has no address */
static const struct ats_ops lnx_ops = {lnx_exec, lnx_close, NULL, NULL, NULL};

int ats_open_nvme(const char *path, ats_dev **out)
{
    if (!path || !out)
        return -EINVAL;
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    int nsid = ioctl(fd, NVME_IOCTL_ID);               /* a namespace device answers its NSID */
    struct lnx *l = calloc(1, sizeof *l);
    ats_dev *dev = l ? ats_dev_alloc(&lnx_ops, l) : NULL;
    uint8_t *ctrl = malloc(4096), *ns = malloc(4096);
    int st = nsid < 0 ? -errno : 0;
    if (!st && (!dev || !ctrl || !ns))
        st = -ENOMEM;
    if (!st) {
        l->fd = fd;
        l->nsid = (uint32_t)nsid;
        struct ats_sqe q;
        ats_sqe_cmd(&q, ADM_IDENTIFY, 0, 1, 0, 0);     /* CNS 1: controller */
        st = lnx_exec(dev, 1, &q, ctrl, 4096, ATS_DIR_TO_HOST, NULL);
        ats_sqe_cmd(&q, ADM_IDENTIFY, 1, 0, 0, 0);     /* CNS 0: this namespace */
        if (!st)
            st = lnx_exec(dev, 1, &q, ns, 4096, ATS_DIR_TO_HOST, NULL);
        if (!st)
            st = ats_dev_identify(dev, ctrl, ns);
    }
    free(ctrl);
    free(ns);
    if (st) {
        close(fd);
        free(l);
        ats_dev_free(dev);
        return st;
    }
    *out = dev;
    return 0;
}
