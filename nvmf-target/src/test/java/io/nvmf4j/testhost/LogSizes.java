package io.nvmf4j.testhost;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.CompletableFuture;

/**
 * The scale probe's log pages and one namespace's I/O ({@code fio-jobs/scale.py --logs}), over NVMe/TCP as a host
 * reads them:
 * <ul>
 *   <li>{@code discovery}: the whole discovery log page (LID 70h), read as a host does in 4 KiB pieces at rising
 *   offsets after its 1 KiB header, then the header again: one line with the records, bytes, pieces, time and
 *   whether the generation counter stayed the same over the read (a log that changed under the reader must be
 *   read again);</li>
 *   <li>{@code changed SUBNQN}: connects to the subsystem, prints {@code READY} and waits for a line on standard
 *   input (the probe adds or removes namespaces meanwhile), then reads the Changed Namespace List (LID 04h,
 *   4 KiB: up to 1,024 NSIDs, or FFFFFFFFh first when more changed) and prints how many NSIDs it held and whether
 *   it overflowed;</li>
 *   <li>{@code iops SUBNQN NSID SECONDS QD WARMUP}: 4 KiB reads (one block of 4 KiB or eight of 512 B at random
 *   LBAs of the first MiB) at queue depth QD for WARMUP seconds not counted (a target just started compiles its
 *   hot paths first), then for SECONDS on one I/O queue: one line with the IOPS.</li>
 * </ul>
 *
 * <p>Usage: {@code LogSizes ADDRESS PORT discovery | changed SUBNQN | iops SUBNQN NSID SECONDS QD WARMUP}
 */
public final class LogSizes {
    private static final String HOST = "nqn.2014-08.org.nvmexpress:uuid:00000000-0000-4000-8000-5ca1e0000001";
    private static final int KATO_MS = 600_000;
    private static final int LID_CHANGED_NS = 0x04;
    private static final int LID_DISCOVERY = 0x70;
    private static final int DISCOVERY_HEADER = 1024;
    private static final int DISCOVERY_RECORD = 1024;
    private static final int PIECE = 4096;

    private LogSizes() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 3) {
            usage();
        }
        String address = args[0];
        int port = Integer.parseInt(args[1]);
        switch (args[2]) {
            case "discovery" -> discovery(address, port);
            case "changed" -> {
                if (args.length != 4) {
                    usage();
                }
                changed(address, port, args[3]);
            }
            case "iops" -> {
                if (args.length != 8) {
                    usage();
                }
                iops(address, port, args[3], Integer.parseInt(args[4]), Integer.parseInt(args[5]),
                    Integer.parseInt(args[6]), Integer.parseInt(args[7]));
            }
            default -> usage();
        }
    }

    private static void usage() {
        System.err.println("usage: LogSizes ADDRESS PORT discovery | changed SUBNQN | iops SUBNQN NSID SECONDS QD WARMUP");
        System.exit(2);
    }

    private static byte[] log(NvmeHost admin, int lid, long offset, int length) throws IOException {
        Completion c = admin.getLogPage(lid, 0, offset, length);
        if (!c.ok()) {
            throw new IOException("Get Log Page " + Integer.toHexString(lid) + "h at " + offset + ": " + c);
        }
        return c.data();
    }

    private static void discovery(String address, int port) throws IOException {
        try (NvmeController c = NvmeController.open(address, port, "nqn.2014-08.org.nvmexpress.discovery", HOST,
                KATO_MS, 0, TcpHostOptions.DEFAULT)) {
            long t0 = System.nanoTime();
            ByteBuffer head = ByteBuffer.wrap(log(c.admin(), LID_DISCOVERY, 0, DISCOVERY_HEADER))
                .order(ByteOrder.LITTLE_ENDIAN);
            long genctr = head.getLong(0);
            long numrec = head.getLong(8);
            long bytes = DISCOVERY_HEADER + numrec * DISCOVERY_RECORD;
            int pieces = 1;
            long records = 0;
            for (long off = DISCOVERY_HEADER; off < bytes; off += PIECE) {
                int len = (int) Math.min(PIECE, bytes - off);
                byte[] piece = log(c.admin(), LID_DISCOVERY, off, len);
                pieces++;
                for (int r = 0; r + DISCOVERY_RECORD <= piece.length; r += DISCOVERY_RECORD) {
                    if (piece[r] != 0 || piece[r + 2] != 0) { // TRTYPE or SUBTYPE set: a record, not zeros
                        records++;
                    }
                }
            }
            long again = ByteBuffer.wrap(log(c.admin(), LID_DISCOVERY, 0, DISCOVERY_HEADER))
                .order(ByteOrder.LITTLE_ENDIAN).getLong(0);
            double ms = (System.nanoTime() - t0) / 1e6;
            System.out.printf("discovery log: %d records (NUMREC %d), %d bytes, %d pieces of up to %d bytes, %.1f ms, "
                + "generation %d %s%n", records, numrec, bytes, pieces, PIECE, ms, genctr,
                again == genctr ? "unchanged over the read" : "changed to " + again + " during the read");
            if (records != numrec) {
                System.exit(1);
            }
        }
    }

    private static void changed(String address, int port, String subnqn) throws IOException {
        try (NvmeController c = NvmeController.open(address, port, subnqn, HOST, KATO_MS, 0, TcpHostOptions.DEFAULT)) {
            System.out.println("READY");
            System.out.flush();
            new BufferedReader(new InputStreamReader(System.in)).readLine();
            ByteBuffer list = ByteBuffer.wrap(log(c.admin(), LID_CHANGED_NS, 0, PIECE)).order(ByteOrder.LITTLE_ENDIAN);
            int first = list.getInt(0);
            int n = 0;
            while (n < PIECE / 4 && list.getInt(n * 4) != 0) {
                n++;
            }
            System.out.printf("changed namespace list: %s%n", first == 0xFFFFFFFF
                ? "overflowed (FFFFFFFFh first: more than 1,024 namespaces changed)"
                : n + " NSIDs, first " + Integer.toUnsignedString(first) + ", last "
                    + Integer.toUnsignedString(n == 0 ? 0 : list.getInt((n - 1) * 4)));
        }
    }

    private static void iops(String address, int port, String subnqn, int nsid, int seconds, int qd, int warmup)
            throws IOException {
        try (NvmeController c = NvmeController.open(address, port, subnqn, HOST, KATO_MS, 1, TcpHostOptions.DEFAULT)) {
            NvmeHost io = c.io(0);
            java.util.SplittableRandom random = new java.util.SplittableRandom(nsid);
            reads(io, random, nsid, qd, warmup);
            long t0 = System.nanoTime();
            long done = reads(io, random, nsid, qd, seconds);
            double s = (System.nanoTime() - t0) / 1e9;
            System.out.printf("iops: nsid %d of %s, 4 KiB random reads at QD %d for %.1f s (after %d s not counted): "
                + "%.0f IOPS%n", nsid, subnqn, qd, s, warmup, done / s);
        }
    }

    /** 4 KiB random reads in the first MiB of nsid at queue depth qd for that many seconds; how many completed. */
    private static long reads(NvmeHost io, java.util.SplittableRandom random, int nsid, int qd, int seconds)
            throws IOException {
        int nlb = 4096 / io.blockSize();
        long slots = (1 << 20) / io.blockSize() / nlb;
        @SuppressWarnings("unchecked")
        CompletableFuture<Completion>[] inFlight = new CompletableFuture[qd];
        long end = System.nanoTime() + seconds * 1_000_000_000L;
        long done = 0;
        for (int i = 0; i < qd; i++) {
            inFlight[i] = io.readAsync(nsid, random.nextLong(slots) * nlb, nlb);
        }
        while (System.nanoTime() < end) {
            for (int i = 0; i < qd; i++) {
                Completion r = io.await(inFlight[i]);
                if (!r.ok()) {
                    throw new IOException("a read of nsid " + nsid + " failed: " + r);
                }
                done++;
                inFlight[i] = io.readAsync(nsid, random.nextLong(slots) * nlb, nlb);
            }
        }
        for (int i = 0; i < qd; i++) {
            io.await(inFlight[i]);
            done++;
        }
        return done;
    }
}
