package io.nvmf4j.it;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * What a child process printed, read as a stream and kept within a fixed bound whatever its length: the first and
 * the last {@link #EDGE_BYTES} bytes, the byte and line counts, and the whole lines that a predicate asks for (up to
 * {@link #MAX_KEPT_LINES}). A tool that prints without end (SPDK's nvme_fuzz prints a JSON block for every command,
 * hundreds of MB in seconds) costs the test a few hundred KiB of heap, never its length.
 *
 * <p>Not thread-safe: one thread {@link #consume(InputStream) consumes} the stream; the others read the result
 * after that thread is done.
 */
public final class ToolOutput {
    /** Bytes kept of the beginning and of the end of the output. */
    public static final int EDGE_BYTES = 64 * 1024;
    /** Lines kept for the predicate at the most; the rest are counted in {@link #keptLinesDropped()}. */
    public static final int MAX_KEPT_LINES = 10_000;
    /** A line longer than this is matched and kept by its first bytes only. */
    static final int MAX_LINE_BYTES = 4096;

    private final Predicate<String> keep;
    private final byte[] head = new byte[EDGE_BYTES];
    private int headLength;
    private final byte[] tail = new byte[EDGE_BYTES];
    private long tailWritten;
    private long bytes;
    private long lines;
    private final byte[] line = new byte[MAX_LINE_BYTES];
    private int lineLength;
    private boolean inLine;
    private final List<String> kept = new ArrayList<>();
    private long keptDropped;

    /** Keeps the lines for which {@code keep} is true, besides the beginning and the end. */
    public ToolOutput(Predicate<String> keep) {
        this.keep = keep;
    }

    /** Keeps only the beginning and the end. */
    public ToolOutput() {
        this(l -> false);
    }

    /** Reads {@code in} to its end (the process's output closes when it exits). */
    public ToolOutput consume(InputStream in) {
        byte[] buf = new byte[64 * 1024];
        try {
            for (int n; (n = in.read(buf)) >= 0; ) {
                accept(buf, 0, n);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("reading a tool's output", e);
        }
        finishLine();
        return this;
    }

    private void accept(byte[] b, int off, int len) {
        int toHead = Math.min(len, EDGE_BYTES - headLength);
        System.arraycopy(b, off, head, headLength, toHead);
        headLength += toHead;
        appendTail(b, off, len);
        int start = off;
        for (int i = off; i < off + len; i++) {
            if (b[i] == '\n') {
                appendLine(b, start, i - start);
                endLine();
                start = i + 1;
            }
        }
        appendLine(b, start, off + len - start);
        bytes += len;
    }

    private void appendTail(byte[] b, int off, int len) {
        if (len > EDGE_BYTES) {
            off += len - EDGE_BYTES;
            tailWritten += len - EDGE_BYTES;
            len = EDGE_BYTES;
        }
        int at = (int) (tailWritten % EDGE_BYTES);
        int first = Math.min(len, EDGE_BYTES - at);
        System.arraycopy(b, off, tail, at, first);
        System.arraycopy(b, off + first, tail, 0, len - first);
        tailWritten += len;
    }

    private void appendLine(byte[] b, int off, int len) {
        if (len > 0) {
            inLine = true;
            int n = Math.min(len, MAX_LINE_BYTES - lineLength);
            System.arraycopy(b, off, line, lineLength, n);
            lineLength += n;
        }
    }

    /** At the end of the output: a last line without a newline is a line too. */
    private void finishLine() {
        if (inLine) {
            endLine();
        }
    }

    private void endLine() {
        lines++;
        inLine = false;
        String text = new String(line, 0, lineLength, StandardCharsets.UTF_8);
        lineLength = 0;
        if (keep.test(text)) {
            if (kept.size() < MAX_KEPT_LINES) {
                kept.add(text);
            } else {
                keptDropped++;
            }
        }
    }

    /** A finished (or killed) child process: its exit status and what it printed. */
    public record Finished(int exitCode, boolean timedOut, ToolOutput output) {
    }

    /**
     * Runs {@code command} with stderr joined to stdout, reading its output as it comes (on a thread of its own),
     * and kills it when it has not exited within {@code timeoutS} seconds ({@link Finished#timedOut()}).
     */
    public static Finished run(List<String> command, long timeoutS, Predicate<String> keep)
        throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        p.getOutputStream().close();
        ToolOutput out = new ToolOutput(keep);
        Thread reader = new Thread(() -> out.consume(p.getInputStream()), "tool-output-" + p.pid());
        reader.setDaemon(true);
        reader.start();
        boolean exited = p.waitFor(timeoutS, TimeUnit.SECONDS);
        if (!exited) {
            p.destroyForcibly().waitFor();
        }
        reader.join(TimeUnit.SECONDS.toMillis(30));
        if (reader.isAlive()) {
            throw new IOException(command.get(0) + " exited but its output stayed open (a child of it holds it)");
        }
        return new Finished(p.exitValue(), !exited, out);
    }

    /** Bytes the tool printed. */
    public long bytes() {
        return bytes;
    }

    /** Lines the tool printed (a last line without a newline counts). */
    public long lines() {
        return lines;
    }

    /** The lines the predicate kept, in order. */
    public List<String> keptLines() {
        return List.copyOf(kept);
    }

    /** Kept lines beyond {@link #MAX_KEPT_LINES}, counted only. */
    public long keptLinesDropped() {
        return keptDropped;
    }

    /** Whether all of the output is in {@link #text()}. */
    public boolean whole() {
        return bytes <= 2L * EDGE_BYTES;
    }

    /**
     * The output when it fits in twice {@link #EDGE_BYTES}; else its beginning, a line saying how many bytes were
     * left out, and its end.
     */
    public String text() {
        if (whole()) {
            byte[] all = new byte[(int) bytes];
            System.arraycopy(head, 0, all, 0, headLength);
            int rest = (int) bytes - headLength;
            for (int i = 0; i < rest; i++) {
                all[headLength + i] = tail[(int) ((tailWritten - rest + i) % EDGE_BYTES)];
            }
            return new String(all, StandardCharsets.UTF_8);
        }
        byte[] end = new byte[EDGE_BYTES];
        for (int i = 0; i < EDGE_BYTES; i++) {
            end[i] = tail[(int) ((tailWritten - EDGE_BYTES + i) % EDGE_BYTES)];
        }
        return new String(head, 0, headLength, StandardCharsets.UTF_8)
            + "\n[... " + (bytes - 2L * EDGE_BYTES) + " bytes of " + bytes + " left out ...]\n"
            + new String(end, StandardCharsets.UTF_8);
    }
}
