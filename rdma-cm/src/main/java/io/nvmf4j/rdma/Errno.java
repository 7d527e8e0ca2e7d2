package io.nvmf4j.rdma;

/**
 * The errno values the binding's callers test for, as the native library was compiled with
 * them. Calls return them negated.
 */
public final class Errno {
    public static final int EPERM = Layout.intValue("errno.EPERM");
    public static final int ENOENT = Layout.intValue("errno.ENOENT");
    public static final int EINTR = Layout.intValue("errno.EINTR");
    public static final int EIO = Layout.intValue("errno.EIO");
    public static final int EBADF = Layout.intValue("errno.EBADF");
    public static final int EAGAIN = Layout.intValue("errno.EAGAIN");
    public static final int ENOMEM = Layout.intValue("errno.ENOMEM");
    public static final int EBUSY = Layout.intValue("errno.EBUSY");
    public static final int ENODEV = Layout.intValue("errno.ENODEV");
    public static final int EINVAL = Layout.intValue("errno.EINVAL");
    public static final int ENOSYS = Layout.intValue("errno.ENOSYS");
    public static final int EOPNOTSUPP = Layout.intValue("errno.EOPNOTSUPP");
    public static final int EADDRINUSE = Layout.intValue("errno.EADDRINUSE");
    public static final int EADDRNOTAVAIL = Layout.intValue("errno.EADDRNOTAVAIL");
    public static final int ENETUNREACH = Layout.intValue("errno.ENETUNREACH");
    public static final int ECONNREFUSED = Layout.intValue("errno.ECONNREFUSED");
    public static final int ETIMEDOUT = Layout.intValue("errno.ETIMEDOUT");

    private Errno() {
    }

    /** {@code strerror} of a (negated or plain) errno, e.g. "Invalid argument". Allocates. */
    public static String describe(int errno) {
        return Native.strerror(errno);
    }
}
