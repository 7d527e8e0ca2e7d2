package io.nvmf4j.runtime;

import io.netty.channel.IoEvent;
import io.netty.channel.IoEventLoop;
import io.netty.channel.IoRegistration;
import io.netty.channel.epoll.EpollIoHandle;
import io.netty.channel.epoll.EpollIoOps;
import io.netty.channel.unix.FileDescriptor;
import io.netty.channel.uring.IoUringIoEvent;
import io.netty.channel.uring.IoUringIoHandle;
import io.netty.channel.uring.IoUringIoOps;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A file descriptor that an event loop of the poll groups (or the acceptor) watches for input, on epoll and on
 * io_uring alike: an RDMA completion channel, the CM's event channel, a file bdev's io_uring ring. The loop calls
 * {@code onReadable} on its own thread whenever the fd is readable, level-triggered: input left unread calls it
 * again on the loop's next pass.
 *
 * <ul>
 *   <li>epoll: the fd sits in the loop's epoll with {@code EPOLLIN} (level-triggered) until the loop ends.</li>
 *   <li>io_uring: a one-shot {@code IORING_OP_POLL_ADD} for {@code POLLIN}, submitted again after each call (a fd
 *       still readable then completes it at once, which makes it level-triggered as above). The operation is made
 *       once; a wakeup allocates nothing. When the loop ends, the poll in flight is cancelled, or the loop's
 *       shutdown would wait for it.</li>
 * </ul>
 *
 * <p>An NIO loop watches no fd: {@link #watch} refuses it.
 */
public final class FdWatch {
    private static final Logger LOG = LoggerFactory.getLogger(FdWatch.class);
    // the kernel's ABI (include/uapi/linux/io_uring.h, poll.h), which Netty's own constants are not public for
    private static final byte IORING_OP_POLL_ADD = 6;
    private static final byte IORING_OP_ASYNC_CANCEL = 14;
    private static final int POLLIN = 0x0001;

    private FdWatch() {
    }

    /**
     * Registers {@code fd} with {@code loop} (from any thread; waits for the registration) and watches it from then
     * on, calling {@code onReadable} on the loop's thread; {@code what} names it in a log line. Throws
     * {@link IllegalStateException} for a loop that can watch no fd (NIO) or that refused the registration.
     */
    public static void watch(IoEventLoop loop, FileDescriptor fd, String what, Runnable onReadable) {
        if (loop.isCompatible(EpollIoHandle.class)) {
            IoRegistration reg = register(loop, new OnEpoll(fd, onReadable), what);
            reg.submit(EpollIoOps.EPOLLIN);
        } else if (loop.isCompatible(IoUringIoHandle.class)) {
            OnIoUring h = new OnIoUring(fd, what, onReadable);
            h.registration = register(loop, h, what);
            if (loop.inEventLoop()) {
                h.arm();
            } else {
                loop.execute(h::arm);
            }
        } else {
            throw new IllegalStateException("the event loop " + loop + " cannot watch " + what
                + " (an NIO loop: socketIo nio)");
        }
    }

    /** Whether {@link #watch} works on {@code loop} (an epoll or io_uring loop). */
    public static boolean canWatch(IoEventLoop loop) {
        return loop.isCompatible(EpollIoHandle.class) || loop.isCompatible(IoUringIoHandle.class);
    }

    private static IoRegistration register(IoEventLoop loop, io.netty.channel.IoHandle h, String what) {
        try {
            return loop.register(h).syncUninterruptibly().getNow();
        } catch (RuntimeException e) {
            throw new IllegalStateException("registering " + what + " with " + loop + ": " + e, e);
        }
    }

    /** In the loop's epoll, level-triggered. */
    private record OnEpoll(FileDescriptor fd, Runnable onReadable) implements EpollIoHandle {
        @Override
        public void handle(IoRegistration registration, IoEvent ioEvent) {
            onReadable.run();
        }

        @Override
        public void close() {
            // the fd is its owner's to close
        }
    }

    /** A one-shot poll submitted again after each completion; owned by the loop's thread. */
    private static final class OnIoUring implements IoUringIoHandle {
        private final FileDescriptor fd;
        private final String what;
        private final Runnable onReadable;
        private final IoUringIoOps pollIn;
        private IoRegistration registration;
        /** The id of the poll in flight, 0 when none. */
        private long armed;
        private boolean closed;

        OnIoUring(FileDescriptor fd, String what, Runnable onReadable) {
            this.fd = fd;
            this.what = what;
            this.onReadable = onReadable;
            this.pollIn = new IoUringIoOps(IORING_OP_POLL_ADD, (byte) 0, (short) 0, fd.intValue(), 0L, 0L, 0, POLLIN,
                0L, (short) 0, (short) 0, 0, 0L);
        }

        void arm() {
            if (!closed && armed == 0) {
                armed = registration.submit(pollIn);
            }
        }

        @Override
        public void handle(IoRegistration registration, IoEvent ioEvent) {
            IoUringIoEvent e = (IoUringIoEvent) ioEvent;
            if (e.opcode() != IORING_OP_POLL_ADD) {
                return; // the completion of the cancel at close
            }
            armed = 0;
            if (closed) {
                return;
            }
            if (e.res() < 0) {
                // cancelled by the kernel or a fd that cannot be polled: submitting it again would only fail again
                LOG.warn("{}: io_uring poll of fd {} failed ({}); no longer watched", what, fd.intValue(), e.res());
                return;
            }
            onReadable.run();
            arm();
        }

        @Override
        public void close() {
            closed = true;
            if (armed != 0) {
                registration.submit(new IoUringIoOps(IORING_OP_ASYNC_CANCEL, (byte) 0, (short) 0, -1, 0L, armed, 0, 0,
                    0L, (short) 0, (short) 0, 0, 0L));
                armed = 0;
            }
            registration.cancel();
        }
    }
}
