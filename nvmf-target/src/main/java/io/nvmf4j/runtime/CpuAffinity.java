package io.nvmf4j.runtime;

import com.sun.jna.LastErrorException;
import com.sun.jna.Native;
import com.sun.jna.NativeLong;

import java.util.BitSet;

/**
 * The calling thread's CPU affinity through glibc's {@code sched_setaffinity(2)} / {@code sched_getaffinity(2)}
 * (pid 0: the calling thread), bound with JNA's direct mapping, which carries its own dispatch library for
 * x86-64 and aarch64: no JNI library of ours to build per architecture for two control-path calls.
 */
public final class CpuAffinity {
    /** Bytes of the CPU mask passed to the kernel: 1024 CPUs, glibc's {@code cpu_set_t}. */
    private static final int MASK_BYTES = 128;
    private static final String FAILURE = register();

    private CpuAffinity() {
    }

    private static String register() {
        try {
            Native.register(CpuAffinity.class, "c");
            return null;
        } catch (UnsatisfiedLinkError | RuntimeException e) {
            return "sched_setaffinity unavailable: " + e.getMessage();
        }
    }

    private static native int sched_setaffinity(int pid, NativeLong size, byte[] mask) throws LastErrorException;

    private static native int sched_getaffinity(int pid, NativeLong size, byte[] mask) throws LastErrorException;

    /** Null when the calls are available, else why not. */
    public static String unavailabilityCause() {
        return FAILURE;
    }

    /** The CPUs the calling thread may run on. */
    public static BitSet current() {
        ensureAvailable();
        byte[] mask = new byte[MASK_BYTES];
        try {
            sched_getaffinity(0, new NativeLong(MASK_BYTES), mask);
        } catch (LastErrorException e) {
            throw new IllegalStateException("sched_getaffinity: errno " + e.getErrorCode(), e);
        }
        return BitSet.valueOf(mask);
    }

    /** Restricts the calling thread to {@code cpus}; an error names the CPUs and the errno. */
    public static void pinCurrentThread(BitSet cpus) {
        ensureAvailable();
        byte[] mask = java.util.Arrays.copyOf(cpus.toByteArray(), MASK_BYTES);
        try {
            sched_setaffinity(0, new NativeLong(MASK_BYTES), mask);
        } catch (LastErrorException e) {
            throw new IllegalStateException("sched_setaffinity(" + cpus + "): errno " + e.getErrorCode(), e);
        }
    }

    private static void ensureAvailable() {
        if (FAILURE != null) {
            throw new IllegalStateException(FAILURE);
        }
    }
}
