package io.nvmf4j.testhost;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A load of connected controllers for the scale probe ({@code fio-jobs/scale.py --controllers N}): opens {@code N}
 * controllers (an admin queue and one I/O queue each, over NVMe/TCP) to one subsystem, their host NQNs spread over
 * {@code H} hosts, and holds them until standard input closes. Prints one line with the time to connect them all and
 * the p50/p99 of one controller's connect, then {@code READY}; once input closes, closes them and prints the time.
 * Each controller reads one block of nsid 1 first, so the I/O queue is in use. Keep Alive is {@code KATO} ms (the
 * probe's measurement must end within it: this host sends no Keep Alive).
 *
 * <p>Usage: {@code ControllerLoad ADDRESS PORT SUBNQN N H KATO_MS}
 */
public final class ControllerLoad {
    private ControllerLoad() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length != 6) {
            System.err.println("usage: ControllerLoad ADDRESS PORT SUBNQN N HOSTS KATO_MS");
            System.exit(2);
        }
        String address = args[0];
        int port = Integer.parseInt(args[1]);
        String subnqn = args[2];
        int n = Integer.parseInt(args[3]);
        int hosts = Math.max(1, Integer.parseInt(args[4]));
        int kato = Integer.parseInt(args[5]);
        List<NvmeController> open = new ArrayList<>(n);
        double[] each = new double[n];
        long start = System.nanoTime();
        try {
            for (int i = 0; i < n; i++) {
                long t0 = System.nanoTime();
                String host = String.format("nqn.2014-08.org.nvmexpress:uuid:00000000-0000-4000-8000-%012d", i % hosts);
                NvmeController c = NvmeController.open(address, port, subnqn, host, kato, 1, TcpHostOptions.DEFAULT);
                open.add(c);
                Completion r = c.io(0).read(1, 0, 1);
                if (!r.ok()) {
                    throw new IOException("controller " + i + ": a read of nsid 1 failed: " + r);
                }
                each[i] = (System.nanoTime() - t0) / 1e6;
            }
            double total = (System.nanoTime() - start) / 1e6;
            Arrays.sort(each);
            System.out.printf("controllers %d (hosts %d): connected in %.0f ms, one connect and read p50 %.2f ms p99 %.2f"
                + " ms%n", n, hosts, total, each[n / 2], each[Math.min(n - 1, (int) Math.ceil(n * 0.99) - 1)]);
            System.out.println("READY");
            System.out.flush();
            while (System.in.read() >= 0) {
                // held until the probe closes our input
            }
        } finally {
            long t0 = System.nanoTime();
            for (NvmeController c : open) {
                try {
                    c.close();
                } catch (Exception e) {
                    System.err.println("close: " + e);
                }
            }
            System.out.printf("closed %d controllers in %.0f ms%n", open.size(), (System.nanoTime() - t0) / 1e6);
        }
    }
}
