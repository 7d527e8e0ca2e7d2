package io.nvmf4j.bdev;

import io.nvmf4j.nvme.NvmeStatus;

/**
 * The one place a backend's error becomes an NVMe status: every block device that fails an operation with
 * an errno (the file bdev's system calls, the error bdev's injected failures) reports
 * {@link #status(int, int)} of it. Linux's nvmet does the same in {@code errno_to_nvme_status} and
 * {@code blk_to_nvme_status}; the choices here follow it where it has one:
 *
 * <ul>
 *   <li>ENOSPC, EDQUOT: Capacity Exceeded (81h, DNR). The medium (a sparse file's file system) has no room
 *       for the blocks; the spec names thin provisioning as the cause of this status, and nvmet returns it
 *       for ENOSPC. Nothing was written; the namespace stays usable for reads and for overwrites of
 *       allocated blocks.</li>
 *   <li>EIO, EILSEQ, EBADMSG (a medium or ECC error): Unrecovered Read Error (media, 281h) for a read or the
 *       read half of Compare, Write Fault (media, 280h) for anything that writes. Both without DNR: the
 *       next attempt may succeed.</li>
 *   <li>ENODEV, ENXIO (the device is gone): Namespace Not Ready (82h) with DNR, "will not become ready".</li>
 *   <li>ETIMEDOUT (the backend did not complete in time): Command Interrupted (21h), which the spec defines for
 *       "processing was interrupted, the host should retry" and which never carries DNR. (Command Abort Requested,
 *       07h, answers the host's own Abort command, which nobody sent here.)</li>
 *   <li>anything else: Internal Error (06h).</li>
 * </ul>
 * Errno values are Linux's (asm-generic/errno-base.h, errno.h), the only platform the target runs on.
 */
public final class BdevErrors {
    public static final int EIO = 5;
    public static final int ENXIO = 6;
    public static final int ENODEV = 19;
    public static final int ENOSPC = 28;
    public static final int EBADMSG = 74;
    public static final int EILSEQ = 84;
    public static final int ETIMEDOUT = 110;
    public static final int EDQUOT = 122;

    /** Operations, as the status depends on the direction. */
    public static final int OP_READ = 0;
    public static final int OP_WRITE = 1;
    public static final int OP_FLUSH = 2;
    public static final int OP_WRITE_ZEROES = 3;
    public static final int OP_DEALLOCATE = 4;

    private BdevErrors() {
    }

    /** The status for {@code op} failed with {@code errno} (positive or negative, as a system call returns it). */
    public static int status(int op, int errno) {
        return switch (Math.abs(errno)) {
            case ENOSPC, EDQUOT -> NvmeStatus.CAPACITY_EXCEEDED;
            case EIO, EILSEQ, EBADMSG -> op == OP_READ ? NvmeStatus.UNRECOVERED_READ_ERROR : NvmeStatus.WRITE_FAULT;
            case ENODEV, ENXIO -> NvmeStatus.NAMESPACE_NOT_READY;
            case ETIMEDOUT -> NvmeStatus.COMMAND_INTERRUPTED;
            default -> NvmeStatus.INTERNAL_ERROR;
        };
    }
}
