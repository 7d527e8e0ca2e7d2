package io.nvmf4j.spdk;

import io.nvmf4j.engine.Engines;

import java.util.ArrayList;
import java.util.List;

/**
 * A JVM that ends with the spdk engine running, for {@link SpdkExitTest}: it starts the engine, never closes it,
 * then either calls {@code System.exit(7)} ({@code exit}) or allocates on the main thread until an
 * {@link OutOfMemoryError} ends it ({@code oom}, as an OutOfMemoryError ends a test JVM). With {@code calls} it
 * closes the engine while {@link #CALLERS} threads make control calls into SPDK in a loop, and exits 0 once each
 * has been refused {@link #REFUSALS} times after the stop.
 */
final class ExitWithSpdkRunning {
    static final int EXIT_STATUS = 7;
    static final int CALLERS = 4;
    static final int REFUSALS = 20;

    private ExitWithSpdkRunning() {
    }

    public static void main(String[] args) throws Exception {
        EngineTarget engine = EngineTarget.start(Engines.SPDK);
        System.out.println("engine running");
        System.out.flush();
        if (args[0].equals("calls")) {
            callsDuringTheStop(engine);
            return;
        }
        if (args[0].equals("exit")) {
            System.exit(EXIT_STATUS);
        }
        List<long[]> kept = new ArrayList<>();
        while (true) {
            kept.add(new long[1 << 17]);
        }
    }

    /** Control calls on {@link #CALLERS} threads, racing the engine's stop; each call either answers or is refused. */
    private static void callsDuringTheStop(EngineTarget engine) throws Exception {
        java.util.concurrent.atomic.AtomicLong answered = new java.util.concurrent.atomic.AtomicLong();
        java.util.concurrent.atomic.AtomicLong refused = new java.util.concurrent.atomic.AtomicLong();
        java.util.concurrent.CountDownLatch warm = new java.util.concurrent.CountDownLatch(CALLERS);
        List<Thread> callers = new ArrayList<>();
        for (int i = 0; i < CALLERS; i++) {
            Thread t = new Thread(() -> {
                int mine = 0;
                int myRefusals = 0;
                while (myRefusals < REFUSALS) {
                    try {
                        SpdkNative.threadStats();
                        answered.incrementAndGet();
                        if (++mine == 50) {
                            warm.countDown();
                        }
                    } catch (SpdkException e) {
                        myRefusals++;
                        refused.incrementAndGet();
                    }
                }
            }, "caller-" + i);
            t.start();
            callers.add(t);
        }
        warm.await();
        engine.close();
        System.out.println("engine closed while " + CALLERS + " threads made calls");
        for (Thread t : callers) {
            t.join();
        }
        System.out.println("calls answered: " + answered.get() + ", refused: " + refused.get());
    }
}
