package io.nvmf4j.service;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * {@link Main} with one more thread, for the test of a fatal error: once a line arrives on standard input it
 * allocates 1 MiB arrays and keeps them until the heap is exhausted, so the JVM throws a real
 * {@link OutOfMemoryError} in that thread while the service runs. The arrays become garbage as the error ends
 * the thread.
 */
final class OutOfMemoryMain {
    static final String THREAD = "nvmf4j-test-allocator";

    private OutOfMemoryMain() {
    }

    public static void main(String[] args) {
        Thread allocator = new Thread(OutOfMemoryMain::allocateOnRequest, THREAD);
        allocator.setDaemon(true);
        allocator.start();
        Main.main(args);
    }

    private static void allocateOnRequest() {
        try {
            if (System.in.read() < 0) {
                return;
            }
        } catch (IOException e) {
            return;
        }
        List<long[]> kept = new ArrayList<>();
        while (true) {
            kept.add(new long[1 << 17]);
        }
    }
}
