/* SPDX-License-Identifier: Apache-2.0
 * libatstx: a Linux NVMe namespace through the kernel's passthrough ioctls (an atomssd board
 * behind the in-kernel NVMe driver). The same SQEs as the simulation; the kernel owns the queues
 * and PRPs. Needs CAP_SYS_ADMIN (the vendor opcodes are passthrough commands). */
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
    uint32_t nsid;
};

static int lnx_exec(ats_dev *dev, int admin, struct ats_sqe *sqe, void *data, uint32_t len, enum ats_dir dir,
                    uint32_t *dw0)
{
    struct lnx *l = dev->priv;
    struct nvme_passthru_cmd c;
    (void)dir;
    memset(&c, 0, sizeof c);
    c.opcode = (uint8_t)sqe->dw[0];
    c.nsid = sqe->dw[1] ? l->nsid : 0;
    c.addr = (uint64_t)(uintptr_t)data;
    c.data_len = len;
    c.cdw10 = sqe->dw[10];
    c.cdw11 = sqe->dw[11];
    c.cdw12 = sqe->dw[12];
    c.cdw13 = sqe->dw[13];
    c.cdw14 = sqe->dw[14];
    c.cdw15 = sqe->dw[15];
    c.timeout_ms = 10000;
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
    close(l->fd);
    free(l);
    return 0;
}

static const struct ats_ops lnx_ops = {lnx_exec, lnx_close, NULL, NULL};

int ats_open_nvme(const char *path, ats_dev **out)
{
    if (!path || !out)
        return -EINVAL;
    int fd = open(path, O_RDWR);
    if (fd < 0)
        return -errno;
    int nsid = ioctl(fd, NVME_IOCTL_ID);
    ats_dev *dev = calloc(1, sizeof *dev);
    struct lnx *l = calloc(1, sizeof *l);
    uint8_t *ctrl = malloc(4096), *ns = malloc(4096);
    int st = nsid < 0 ? -errno : 0;
    if (!st && (!dev || !l || !ctrl || !ns))
        st = -ENOMEM;
    if (!st) {
        l->fd = fd;
        l->nsid = (uint32_t)nsid;
        dev->priv = l;
        dev->ops = &lnx_ops;
        struct ats_sqe q;
        ats_sqe_simple(&q, ADM_IDENTIFY, 0, 1, 0, 0);
        st = lnx_exec(dev, 1, &q, ctrl, 4096, ATS_TO_HOST, NULL);
        ats_sqe_simple(&q, ADM_IDENTIFY, 1, 0, 0, 0);
        if (!st)
            st = lnx_exec(dev, 1, &q, ns, 4096, ATS_TO_HOST, NULL);
        if (!st)
            st = ats_dev_init_from_identify(dev, ctrl, ns);
    }
    free(ctrl);
    free(ns);
    if (st) {
        close(fd);
        free(l);
        free(dev);
        return st;
    }
    *out = dev;
    return 0;
}
