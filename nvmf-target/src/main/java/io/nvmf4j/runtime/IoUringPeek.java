package io.nvmf4j.runtime;

import io.netty.channel.IoHandler;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

/**
 * Whether Netty's io_uring handler has anything to do on a pass that must not block: completions in its queue,
 * submissions waiting for {@code io_uring_enter}, or work the kernel holds for it (its sq flags {@code
 * IORING_SQ_TASKRUN}, {@code IORING_SQ_CQ_OVERFLOW}). Exactly then its non-blocking {@code run} does something;
 * otherwise it returns 0 having done nothing.
 *
 * <p>Why: Netty 4.2.18's {@code IoUringIoHandler.run} makes its completion callback ({@code this::handle}) anew on
 * every call, 16 bytes that escape (netty/netty#17437, fixed upstream by #17457 after 4.2.18). A spinning poll group
 * calls it on every pass, so an idle busy poll group made that garbage millions of times a second and the allocation
 * test measured kilobytes per I/O; asking first costs three loads from the ring's shared memory and allocates
 * nothing. Remove with a Netty that has the fix.
 *
 * <p>Netty keeps the ring package-private: it is read through method handles into {@code io.netty.channel.uring},
 * which the class path allows (each Netty jar is in the unnamed module). Where they cannot be had (a module path, a
 * Netty that changed them) {@link #unavailabilityCause()} says why and every pass calls {@code run}.
 */
final class IoUringPeek {
    private static final int IORING_SQ_CQ_OVERFLOW = 1 << 1; // include/uapi/linux/io_uring.h
    private static final int IORING_SQ_TASKRUN = 1 << 2;
    /** (Object handler) Object ring, (Object ring) Object cq/sq, (Object cq) boolean, (Object sq) int. */
    private static final MethodHandle RING;
    private static final MethodHandle CQ;
    private static final MethodHandle SQ;
    private static final MethodHandle HAS_COMPLETIONS;
    private static final MethodHandle COUNT;
    private static final MethodHandle FLAGS;
    private static final String UNAVAILABLE;

    static {
        MethodHandle ring = null;
        MethodHandle cq = null;
        MethodHandle sq = null;
        MethodHandle has = null;
        MethodHandle count = null;
        MethodHandle flags = null;
        String why = null;
        try {
            Class<?> handler = Class.forName("io.netty.channel.uring.IoUringIoHandler");
            Class<?> ringBuffer = Class.forName("io.netty.channel.uring.RingBuffer");
            Class<?> completions = Class.forName("io.netty.channel.uring.CompletionQueue");
            Class<?> submissions = Class.forName("io.netty.channel.uring.SubmissionQueue");
            MethodHandles.Lookup l = MethodHandles.privateLookupIn(handler, MethodHandles.lookup());
            ring = l.findGetter(handler, "ringBuffer", ringBuffer).asType(MethodType.methodType(Object.class,
                Object.class));
            cq = l.findVirtual(ringBuffer, "ioUringCompletionQueue", MethodType.methodType(completions))
                .asType(MethodType.methodType(Object.class, Object.class));
            sq = l.findVirtual(ringBuffer, "ioUringSubmissionQueue", MethodType.methodType(submissions))
                .asType(MethodType.methodType(Object.class, Object.class));
            has = l.findVirtual(completions, "hasCompletions", MethodType.methodType(boolean.class))
                .asType(MethodType.methodType(boolean.class, Object.class));
            count = l.findVirtual(submissions, "count", MethodType.methodType(int.class))
                .asType(MethodType.methodType(int.class, Object.class));
            flags = l.findVirtual(submissions, "flags", MethodType.methodType(int.class))
                .asType(MethodType.methodType(int.class, Object.class));
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            why = "Netty's io_uring ring cannot be read here: " + e;
        }
        RING = ring;
        CQ = cq;
        SQ = sq;
        HAS_COMPLETIONS = has;
        COUNT = count;
        FLAGS = flags;
        UNAVAILABLE = why;
    }

    private final Object completions;
    private final Object submissions;

    private IoUringPeek(Object completions, Object submissions) {
        this.completions = completions;
        this.submissions = submissions;
    }

    /** Null where the ring can be read, else why not. */
    static String unavailabilityCause() {
        return UNAVAILABLE;
    }

    /** The peek into {@code handler}'s ring (an {@code IoUringIoHandler}), or null where it cannot be read. */
    static IoUringPeek of(IoHandler handler) {
        if (UNAVAILABLE != null) {
            return null;
        }
        try {
            Object ring = (Object) RING.invokeExact((Object) handler);
            return new IoUringPeek((Object) CQ.invokeExact(ring), (Object) SQ.invokeExact(ring));
        } catch (Throwable e) {
            return null;
        }
    }

    /** Whether the handler's non-blocking run would do anything (the loop's thread). */
    boolean hasWork() {
        try {
            return (boolean) HAS_COMPLETIONS.invokeExact(completions) || (int) COUNT.invokeExact(submissions) > 0
                || ((int) FLAGS.invokeExact(submissions) & (IORING_SQ_CQ_OVERFLOW | IORING_SQ_TASKRUN)) != 0;
        } catch (Throwable e) {
            return true; // let run decide
        }
    }
}
