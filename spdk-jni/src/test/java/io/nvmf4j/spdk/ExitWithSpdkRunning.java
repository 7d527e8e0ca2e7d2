package io.nvmf4j.spdk;

import io.nvmf4j.engine.Engines;

import java.util.ArrayList;
import java.util.List;

/**
 * A JVM that ends with the spdk engine running, for {@link SpdkExitTest}: it starts the engine, never closes it,
 * then either calls {@code System.exit(7)} ({@code exit}) or allocates on the main thread until an
 * {@link OutOfMemoryError} ends it ({@code oom}, as an OutOfMemoryError ends a test JVM).
 */
final class ExitWithSpdkRunning {
    static final int EXIT_STATUS = 7;

    private ExitWithSpdkRunning() {
    }

    public static void main(String[] args) throws Exception {
        EngineTarget.start(Engines.SPDK);
        System.out.println("engine running");
        System.out.flush();
        if (args[0].equals("exit")) {
            System.exit(EXIT_STATUS);
        }
        List<long[]> kept = new ArrayList<>();
        while (true) {
            kept.add(new long[1 << 17]);
        }
    }
}
