package io.nvmf4j.transport.tcp;

import org.bouncycastle.tls.AbstractTlsClient;
import org.bouncycastle.tls.AbstractTlsServer;
import org.bouncycastle.tls.AlertDescription;
import org.bouncycastle.tls.BasicTlsPSKExternal;
import org.bouncycastle.tls.CipherSuite;
import org.bouncycastle.tls.PRFAlgorithm;
import org.bouncycastle.tls.ProtocolVersion;
import org.bouncycastle.tls.TlsAuthentication;
import org.bouncycastle.tls.TlsClientProtocol;
import org.bouncycastle.tls.TlsCredentials;
import org.bouncycastle.tls.TlsFatalAlert;
import org.bouncycastle.tls.TlsPSKExternal;
import org.bouncycastle.tls.TlsServerProtocol;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.Vector;

/**
 * What Bouncy Castle's TLS 1.3 record layer and the JDK's AES-GCM allocate for given records on the server side, with
 * nothing of nvmf4j around them: a server and a client protocol in memory on the calling thread, the server with the
 * crypto {@link TlsServerHandler} uses (AES-128-GCM through {@link TlsAesGcm}), the bytes moved the way the handler
 * moves them (a whole record offered from an array, plaintext read into and out of direct buffers that are reused).
 * Only the server's calls are counted. AllocationTest bounds the handler's allocation per I/O by this figure for the
 * same records: what remains of the handler's own is the difference.
 *
 * <p>The loop ({@link #rounds}) must run interpreted ({@link #REQUIRED_FLAG}, set in the allocation execution of
 * nvmf-target's pom). Compiled, C2 inlined the four server calls into it as it chose in that JVM and its escape
 * analysis removed some of the record layer's objects there: the figure came out 4238 to 4580 bytes per I/O from
 * one JVM to the next, for a handler that allocates 4316 in every one, and fell under the handler's (on CI).
 * Called from interpreted code, each entry point is a compile root, as it is at the least in the handler, whose
 * compiled methods can only inline more of it. And the first figure of a JVM was not yet the steady state (4220 to
 * 4561 with the loop interpreted, C2 still compiling parts of the record layer): the figure is a window that
 * repeats, and AllocationTest takes it after each window of the handler's, when the JIT has compiled what the
 * handler's records went through (then 4268 to 4316 per I/O, the handler 4220 to 4287, in five JVMs).
 */
public final class TlsRecordCost {
    private static final com.sun.management.ThreadMXBean THREADS =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    /** The JVM option that keeps {@link #rounds} interpreted. */
    public static final String REQUIRED_FLAG =
        "-XX:CompileCommand=exclude,io.nvmf4j.transport.tcp.TlsRecordCost::rounds";

    private final TlsServerProtocol server = new TlsServerProtocol();
    private final TlsClientProtocol client = new TlsClientProtocol();
    private final byte[] record = new byte[TlsServerHandler.MAX_RECORD];
    private final byte[] plain = new byte[64 * 1024];
    private final ByteBuffer in = ByteBuffer.allocateDirect(64 * 1024);
    private final ByteBuffer out = ByteBuffer.allocateDirect(64 * 1024);

    private TlsRecordCost() throws IOException {
        byte[] psk = new byte[32];
        new SecureRandom().nextBytes(psk);
        byte[] identity = "NVMe0R01 nqn.2014-08.org.nvmexpress:uuid:cost nqn.2026-11.io.nvmf4j:cost"
            .getBytes(StandardCharsets.UTF_8);
        server.accept(new AbstractTlsServer(TlsServerHandler.crypto()) {
            @Override
            protected ProtocolVersion[] getSupportedVersions() {
                return ProtocolVersion.TLSv13.only();
            }

            @Override
            protected int[] getSupportedCipherSuites() {
                return new int[] {CipherSuite.TLS_AES_128_GCM_SHA256};
            }

            @Override
            public TlsPSKExternal getExternalPSK(@SuppressWarnings("rawtypes") Vector identities) {
                return new BasicTlsPSKExternal(identity, getCrypto().createSecret(psk),
                    PRFAlgorithm.tls13_hkdf_sha256);
            }

            @Override
            public TlsCredentials getCredentials() throws IOException {
                throw new TlsFatalAlert(AlertDescription.handshake_failure, "PSK only");
            }
        });
        // the client on the same crypto: the record layer's call sites see one cipher class, as in the target
        client.connect(new AbstractTlsClient(TlsServerHandler.crypto()) {
            @Override
            protected ProtocolVersion[] getSupportedVersions() {
                return ProtocolVersion.TLSv13.only();
            }

            @Override
            protected int[] getSupportedCipherSuites() {
                return new int[] {CipherSuite.TLS_AES_128_GCM_SHA256};
            }

            @Override
            public Vector<TlsPSKExternal> getExternalPSKs() {
                Vector<TlsPSKExternal> v = new Vector<>();
                v.add(new BasicTlsPSKExternal(identity, getCrypto().createSecret(psk), PRFAlgorithm.tls13_hkdf_sha256));
                return v;
            }

            @Override
            public TlsAuthentication getAuthentication() {
                return io.nvmf4j.testhost.TlsRelay.pskOnly();
            }
        });
        for (int i = 0; i < 20 && (client.isHandshaking() || server.isHandshaking()); i++) {
            shuttle();
        }
        if (client.isHandshaking() || server.isHandshaking()) {
            throw new IOException("the in-memory TLS handshake did not finish");
        }
        shuttle();
    }

    private void shuttle() throws IOException {
        int n = client.getAvailableOutputBytes();
        if (n > 0) {
            byte[] b = new byte[n];
            client.readOutput(b, 0, n);
            server.offerInput(b);
        }
        n = server.getAvailableOutputBytes();
        if (n > 0) {
            byte[] b = new byte[n];
            server.readOutput(b, 0, n);
            client.offerInput(b);
        }
    }

    /**
     * Bytes the server side allocates per round, a round opening one record whose plaintext is {@code in[i]} bytes and
     * sealing one of {@code out[i]} bytes ({@code i} cycling through both, which have one length): after {@code warmUp}
     * rounds (JIT), windows of {@code rounds} rounds until one allocates what the one before it did (within a byte
     * per round; at most {@link #MAX_WINDOWS}), the smaller of the last two.
     */
    public static double serverBytesPerRound(int[] inSizes, int[] outSizes, int warmUp, int rounds) throws IOException {
        if (!ManagementFactory.getRuntimeMXBean().getInputArguments().contains(REQUIRED_FLAG)) {
            throw new IllegalStateException("TlsRecordCost needs the JVM option " + REQUIRED_FLAG
                + " (its loop interpreted, see the class comment); nvmf-target's pom sets it in the allocation execution");
        }
        TlsRecordCost c = new TlsRecordCost();
        c.rounds(inSizes, outSizes, warmUp);
        double last = (double) c.rounds(inSizes, outSizes, rounds) / rounds;
        for (int w = 1; w < MAX_WINDOWS; w++) {
            double next = (double) c.rounds(inSizes, outSizes, rounds) / rounds;
            if (Math.abs(next - last) < 1) {
                return Math.min(next, last);
            }
            last = next;
        }
        throw new IllegalStateException("the record layer's allocation per round did not settle in " + MAX_WINDOWS
            + " windows of " + rounds + " rounds (last " + last + " bytes)");
    }

    /** Windows at most: seen settling by the third. */
    private static final int MAX_WINDOWS = 12;

    /** Runs the rounds; returns the bytes the server's calls allocated. */
    private long rounds(int[] inSizes, int[] outSizes, int rounds) throws IOException {
        long counted = 0;
        for (int r = 0; r < rounds; r++) {
            int k = r % inSizes.length;
            client.writeApplicationData(plain, 0, inSizes[k]);
            int n = client.getAvailableOutputBytes();
            if (n > record.length) {
                throw new IOException("the client wrote " + n + " bytes: more than one record");
            }
            client.readOutput(record, 0, n);

            long before = THREADS.getCurrentThreadAllocatedBytes();
            server.offerInput(record, 0, n);
            int got = server.getAvailableInputBytes();
            in.clear();
            server.readInput(in, got);
            server.writeApplicationData(plain, 0, outSizes[k]);
            int sealed = server.getAvailableOutputBytes();
            out.clear();
            server.readOutput(out, sealed);
            counted += THREADS.getCurrentThreadAllocatedBytes() - before;

            if (got != inSizes[k]) {
                throw new IOException("the server opened " + got + " plaintext bytes of " + inSizes[k]);
            }
            out.flip();
            out.get(record, 0, sealed);
            client.offerInput(record, 0, sealed);
            int back = client.getAvailableInputBytes();
            if (back != outSizes[k]) {
                throw new IOException("the client opened " + back + " plaintext bytes of " + outSizes[k]);
            }
            client.readInput(plain, 0, back);
        }
        return counted;
    }
}
