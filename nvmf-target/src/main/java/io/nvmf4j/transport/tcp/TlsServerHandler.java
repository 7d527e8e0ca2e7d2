package io.nvmf4j.transport.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.nvmf4j.auth.TlsPsk;
import io.nvmf4j.config.LogText;
import org.bouncycastle.jcajce.util.DefaultJcaJceHelper;
import org.bouncycastle.jce.provider.BouncyCastleProvider;
import org.bouncycastle.tls.AbstractTlsServer;
import org.bouncycastle.tls.AlertDescription;
import org.bouncycastle.tls.BasicTlsPSKExternal;
import org.bouncycastle.tls.CipherSuite;
import org.bouncycastle.tls.ClientHello;
import org.bouncycastle.tls.EncryptionAlgorithm;
import org.bouncycastle.tls.HandshakeMessageInput;
import org.bouncycastle.tls.HandshakeType;
import org.bouncycastle.tls.OfferedPsks;
import org.bouncycastle.tls.PRFAlgorithm;
import org.bouncycastle.tls.ProtocolVersion;
import org.bouncycastle.tls.PskIdentity;
import org.bouncycastle.tls.TlsCredentials;
import org.bouncycastle.tls.TlsExtensionsUtils;
import org.bouncycastle.tls.TlsFatalAlert;
import org.bouncycastle.tls.TlsPSKExternal;
import org.bouncycastle.tls.TlsServerProtocol;
import org.bouncycastle.tls.crypto.TlsCipher;
import org.bouncycastle.tls.crypto.TlsCrypto;
import org.bouncycastle.tls.crypto.TlsCryptoParameters;
import org.bouncycastle.tls.crypto.impl.TlsAEADCipherImpl;
import org.bouncycastle.tls.crypto.impl.jcajce.JcaTlsCrypto;
import org.bouncycastle.tls.crypto.impl.jcajce.JcaTlsCryptoProvider;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.Vector;

/**
 * The server side of an NVMe/TCP secure channel (NVMe/TCP transport specification 3.6): TLS 1.3 with an external PSK
 * (psk_dhe_ke), cipher suites TLS_AES_128_GCM_SHA256 and TLS_AES_256_GCM_SHA384 (the PSK's hash picks the one;
 * TLS_CHACHA20_POLY1305_SHA256 for GnuTLS's SHA-256 binder of a SHA-384 PSK, see {@link Server#getExternalPSK}), no
 * certificates. It sits in front of {@link TcpQueue}: ciphertext in, the NVMe/TCP PDU stream out, and the PDUs
 * {@link TcpQueue} writes are gathered until its flush and sealed into as few records as fit.
 *
 * <p>Bouncy Castle's TLS does the protocol through its non-blocking API ({@link TlsServerProtocol#offerInput},
 * {@link TlsServerProtocol#readOutput}); it is the maintained Java TLS with TLS 1.3 external PSKs (the JDK's has
 * only resumption PSKs). Bytes move between Netty's pooled buffers and it through two per-connection arrays (whole
 * records in, plaintext gathered out); its record layer allocates per record (an output array per sealed record, its
 * result objects) and so does the JDK's AES-GCM ({@link TlsAesGcm}: the cipher's per-record state), nothing of
 * ours does per PDU or record (AllocationTest shows it).
 *
 * <p>Failures close this connection only: a handshake that fails (unknown identity, wrong PSK: the binder does not
 * verify, garbage instead of a ClientHello) sends the TLS alert and closes; a handshake not finished within
 * {@code tcp.connectTimeoutMs} is closed by {@link TcpQueue}'s timer (no ICReq in time), logged here as an unfinished
 * handshake. All run on the channel's event loop.
 */
final class TlsServerHandler extends ChannelDuplexHandler {
    private static final Logger LOG = LoggerFactory.getLogger(TlsServerHandler.class);
    private static final TlsCrypto CRYPTO = new Crypto(new SecureRandom());
    /** Plaintext gathered before it is sealed (at flush, or when full): four 16 KiB records. */
    private static final int GATHER = 64 * 1024;

    private final TlsServerProtocol tls = new Protocol();
    private final TlsPsks psks;
    private final byte[] chunk = new byte[GATHER];
    /** A TLS record: 5 header bytes, at most 2^14 + 256 ciphertext bytes (RFC 8446 5.2). */
    static final int RECORD_HEADER = 5;
    static final int MAX_RECORD = RECORD_HEADER + (1 << 14) + 256;
    /**
     * The TLS record coming in, gathered whole before Bouncy Castle gets it: offered one whole record at a time, it
     * decrypts the record in this array (its {@code readFullRecord}); offered pieces, it queues them, copies each
     * record out into a new array and allocates a header and a preview per record. Its own array: input arrives
     * while plaintext is gathered in {@link #chunk} (responses of a batch wait there for the flush), and sharing one
     * array overwrote them.
     */
    private final byte[] inChunk = new byte[MAX_RECORD];
    /** Bytes of the current record in {@link #inChunk}, and its length once its header is in (0 before). */
    private int inFill;
    private int inRecord;
    private final List<ChannelPromise> gatheredPromises = new ArrayList<>();
    private int gathered;
    private String peer;
    private String identity;
    private boolean failed;
    /** The identity whose PSK the handshake took, and the cipher suite it ended with (set by {@link Server}). */
    private TlsPsk.Identity identityOffered;
    private int cipherSuite = -1;
    /** The length of each offered identity's binder, in the ClientHello's order (null before the ClientHello). */
    private int[] binderLengths;
    /** The identity's hash is SHA-384 but its binder SHA-256 (see {@link Server#getExternalPSK}). */
    private boolean sha256Binder;

    TlsServerHandler(TlsPsks psks) {
        this.psks = psks;
    }

    /** The crypto every connection's TLS uses (tests measure what its record layer costs alone). */
    static TlsCrypto crypto() {
        return CRYPTO;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) throws Exception {
        peer = TcpQueue.hostPort(ctx.channel().remoteAddress());
        tls.accept(new Server());
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ByteBuf in = (ByteBuf) msg;
        try {
            while (in.isReadable() && !failed) {
                offerRecords(in);
            }
        } catch (IOException e) {
            fail(ctx, e);
            return;
        } finally {
            in.release();
        }
        if (identity == null && tls.isConnected() && !tls.isHandshaking()) {
            handshakeDone(ctx);
        }
        writeOutput(ctx, null);
        ctx.flush();
        int n = tls.getAvailableInputBytes();
        if (n > 0) {
            ByteBuf plain = ctx.alloc().directBuffer(n);
            tls.readInput(plain.internalNioBuffer(0, n), n);
            plain.writerIndex(n);
            ctx.fireChannelRead(plain);
        }
    }

    /**
     * Moves bytes of {@code in} into the record being gathered and offers it to Bouncy Castle when it is whole. A header
     * announcing more than a TLS record can hold is offered alone: Bouncy Castle refuses it (record_overflow).
     */
    private void offerRecords(ByteBuf in) throws IOException {
        int want = inRecord == 0 ? RECORD_HEADER : inRecord;
        int n = Math.min(in.readableBytes(), want - inFill);
        in.readBytes(inChunk, inFill, n);
        inFill += n;
        if (inRecord == 0 && inFill == RECORD_HEADER) {
            inRecord = RECORD_HEADER + ((inChunk[3] & 0xff) << 8 | inChunk[4] & 0xff);
            if (inRecord > MAX_RECORD) {
                inRecord = RECORD_HEADER;
            }
        }
        if (inRecord != 0 && inFill == inRecord) {
            int whole = inFill;
            inFill = 0;
            inRecord = 0;
            tls.offerInput(inChunk, 0, whole);
        }
    }

    private void handshakeDone(ChannelHandlerContext ctx) {
        identity = identityOffered.text();
        TcpPduReader reader = ctx.pipeline().get(TcpPduReader.class);
        TcpQueue queue = reader == null ? null : reader.queue();
        if (queue != null) {
            queue.secured(identityOffered); // a Connect on it must name this identity's host and subsystem
        }
        LOG.info("TLS 1.3 from {}: PSK identity '{}', {}{}", peer, LogText.escape(identity), suiteName(cipherSuite), sha256Binder
            ? " (a SHA-384 PSK with a SHA-256 binder: GnuTLS before 3.8.11, as tlshd of Debian 13 uses it)" : "");
    }

    private static String suiteName(int suite) {
        return switch (suite) {
            case CipherSuite.TLS_AES_128_GCM_SHA256 -> "TLS_AES_128_GCM_SHA256";
            case CipherSuite.TLS_AES_256_GCM_SHA384 -> "TLS_AES_256_GCM_SHA384";
            case CipherSuite.TLS_CHACHA20_POLY1305_SHA256 -> "TLS_CHACHA20_POLY1305_SHA256";
            default -> "cipher suite 0x" + Integer.toHexString(suite);
        };
    }

    /**
     * Notes the binder lengths of the ClientHello's pre_shared_key extension before Bouncy Castle selects a PSK: its
     * {@link Server#getExternalPSK} sees only the identities, and the binder's length tells which hash the host took.
     */
    private final class Protocol extends TlsServerProtocol {
        @Override
        protected void handleHandshakeMessage(short type, HandshakeMessageInput buf) throws IOException {
            if (type == HandshakeType.client_hello && binderLengths == null) {
                int left = buf.available();
                byte[] body = buf.readNBytes(left);
                buf.reset(); // back to the mark, at or before where this message's body starts, and on to it
                buf.skip(buf.available() - left);
                binderLengths = binderLengths(body);
            }
            super.handleHandshakeMessage(type, buf);
        }
    }

    private static int[] binderLengths(byte[] clientHello) {
        try {
            OfferedPsks offered = TlsExtensionsUtils.getPreSharedKeyClientHello(
                ClientHello.parse(new ByteArrayInputStream(clientHello), null).getExtensions());
            if (offered == null) {
                return new int[0];
            }
            int[] lengths = new int[offered.getBinders().size()];
            for (int i = 0; i < lengths.length; i++) {
                lengths[i] = ((byte[]) offered.getBinders().get(i)).length;
            }
            return lengths;
        } catch (IOException e) {
            return new int[0]; // Bouncy Castle's own parse of it fails the handshake with the reason
        }
    }

    /** A TLS failure: the alert Bouncy Castle queued (if any) goes out, then the connection closes. */
    private void fail(ChannelHandlerContext ctx, IOException e) {
        if (failed) {
            return;
        }
        failed = true;
        LOG.warn("TLS from {}: {} ({}); closing", peer, tls.isHandshaking() || identity == null
            ? "handshake failed" : "connection failed", e.getMessage() != null ? e.getMessage() : e.toString());
        writeOutput(ctx, null);
        ctx.writeAndFlush(ctx.alloc().buffer(0)).addListener(f -> ctx.close());
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        ByteBuf b = (ByteBuf) msg;
        try {
            if (failed || tls.isClosed() || identity == null) {
                promise.setFailure(new IOException("TLS connection from " + peer + " is not open for data"));
                return;
            }
            while (b.isReadable()) {
                int n = Math.min(b.readableBytes(), chunk.length - gathered);
                b.readBytes(chunk, gathered, n);
                gathered += n;
                if (gathered == chunk.length) {
                    seal(ctx);
                }
            }
            if (!promise.isVoid()) {
                gatheredPromises.add(promise);
            }
        } catch (IOException e) {
            promise.tryFailure(e);
            fail(ctx, e);
        } finally {
            b.release();
        }
    }

    @Override
    public void flush(ChannelHandlerContext ctx) {
        if (gathered > 0 && !failed) {
            try {
                seal(ctx);
            } catch (IOException e) {
                fail(ctx, e);
                return;
            }
        } else if (!gatheredPromises.isEmpty()) {
            // empty writes since the last seal (TcpQueue.disconnect's, whose listener closes the connection): they
            // complete when the records written before them are sent, not at some later seal
            List<ChannelPromise> p = takePromises();
            ctx.write(Unpooled.EMPTY_BUFFER).addListener(f -> p.forEach(f.isSuccess() ? ChannelPromise::trySuccess
                : q -> q.tryFailure(f.cause())));
        }
        ctx.flush();
    }

    /** Seals the gathered plaintext into records and writes them (not flushed). */
    private void seal(ChannelHandlerContext ctx) throws IOException {
        tls.writeApplicationData(chunk, 0, gathered);
        gathered = 0;
        writeOutput(ctx, gatheredPromises.isEmpty() ? null : takePromises());
    }

    private List<ChannelPromise> takePromises() {
        List<ChannelPromise> p = new ArrayList<>(gatheredPromises);
        gatheredPromises.clear();
        return p;
    }

    /** Writes what Bouncy Castle has queued for the peer; completes {@code promises} when it is sent. */
    private void writeOutput(ChannelHandlerContext ctx, List<ChannelPromise> promises) {
        int n = tls.getAvailableOutputBytes();
        if (n == 0) {
            if (promises != null) {
                promises.forEach(ChannelPromise::trySuccess);
            }
            return;
        }
        ByteBuf out = ctx.alloc().directBuffer(n);
        tls.readOutput(out.internalNioBuffer(0, n), n);
        out.writerIndex(n);
        if (promises == null) {
            ctx.write(out, ctx.voidPromise());
        } else {
            ctx.write(out).addListener(f -> promises.forEach(p -> {
                if (f.isSuccess()) {
                    p.trySuccess();
                } else {
                    p.tryFailure(f.cause());
                }
            }));
        }
    }

    @Override
    public void close(ChannelHandlerContext ctx, ChannelPromise promise) {
        if (!failed && identity == null) {
            // TcpQueue's connectTimeoutMs (no ICReq in time), or the target stopping, during the handshake
            LOG.info("TLS from {}: handshake not finished; closing", peer);
        }
        if (!failed && identity != null && !tls.isClosed()) {
            try {
                flush(ctx);
                tls.close(); // close_notify
                writeOutput(ctx, null);
                ctx.flush();
            } catch (IOException e) {
                LOG.debug("TLS from {}: close_notify: {}", peer, e.toString());
            }
        }
        ctx.close(promise);
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        gatheredPromises.forEach(p -> p.tryFailure(new IOException("TLS connection from " + peer + " closed")));
        gatheredPromises.clear();
    }

    /** TLS 1.3 only, the two NVMe/TCP cipher suites, external PSKs only (no certificate to fall back on). */
    private final class Server extends AbstractTlsServer {
        private int[] pskSuites;

        Server() {
            super(CRYPTO);
        }

        @Override
        protected ProtocolVersion[] getSupportedVersions() {
            return ProtocolVersion.TLSv13.only();
        }

        @Override
        protected int[] getSupportedCipherSuites() {
            return new int[] {CipherSuite.TLS_AES_256_GCM_SHA384, CipherSuite.TLS_AES_128_GCM_SHA256};
        }

        /**
         * The PSK of the first offered identity that has one here. Its hash is the identity's, with one exception:
         * GnuTLS before 3.8.11 computes the binder of every external PSK with SHA-256 (it has no way to be told the
         * hash), and Debian 13's tlshd (ktls-utils 1.0.0 on GnuTLS 3.8.9) is such a host. For a SHA-384 identity
         * ({@code NVMe0R02}, a 48-byte PSK) it offers TLS_AES_256_GCM_SHA384 and TLS_CHACHA20_POLY1305_SHA256 with
         * a 32-byte binder, and accepts only a suite whose hash is the binder's. So a SHA-384 identity whose binder
         * is 32 bytes long takes its 48-byte TLS PSK with SHA-256 and a SHA-256 suite it offers (the standard TLS 1.3
         * key schedule with that hash), the only handshake that host completes.
         */
        @Override
        public TlsPSKExternal getExternalPSK(@SuppressWarnings("rawtypes") Vector identities) {
            for (int i = 0; i < identities.size(); i++) {
                byte[] id = ((PskIdentity) identities.get(i)).getIdentity();
                TlsPsks.Found f = psks.find(new String(id, StandardCharsets.UTF_8), peer);
                if (f != null) {
                    identityOffered = f.identity();
                    sha256Binder = f.identity().hash() == 2 && binderLengths != null && i < binderLengths.length
                        && binderLengths[i] == 32;
                    boolean sha256 = f.identity().hash() == 1 || sha256Binder;
                    pskSuites = sha256Binder
                        ? new int[] {CipherSuite.TLS_AES_128_GCM_SHA256, CipherSuite.TLS_CHACHA20_POLY1305_SHA256}
                        : new int[] {sha256 ? CipherSuite.TLS_AES_128_GCM_SHA256 : CipherSuite.TLS_AES_256_GCM_SHA384};
                    return new BasicTlsPSKExternal(id, getCrypto().createSecret(f.psk()),
                        sha256 ? PRFAlgorithm.tls13_hkdf_sha256 : PRFAlgorithm.tls13_hkdf_sha384);
                }
            }
            return null;
        }

        /** A suite whose hash is the PSK's (Bouncy Castle would take the client's first choice). */
        @Override
        public int getSelectedCipherSuite() throws IOException {
            if (pskSuites == null) {
                return super.getSelectedCipherSuite();
            }
            for (int suite : pskSuites) {
                for (int offered : offeredCipherSuites) {
                    if (offered == suite) {
                        return suite;
                    }
                }
            }
            StringBuilder names = new StringBuilder();
            for (int suite : pskSuites) {
                names.append(names.length() == 0 ? "" : " or ").append(suiteName(suite));
            }
            throw new TlsFatalAlert(AlertDescription.handshake_failure, "the client does not offer " + names
                + ", the cipher suite" + (pskSuites.length > 1 ? "s" : "") + " of its PSK's hash"
                + (sha256Binder ? " (SHA-256: its binder is SHA-256, although its identity says SHA-384)" : ""));
        }

        @Override
        public void notifyHandshakeComplete() throws IOException {
            super.notifyHandshakeComplete();
            cipherSuite = context.getSecurityParametersConnection().getCipherSuite();
        }

        @Override
        public TlsCredentials getCredentials() throws IOException {
            // reached only when no offered identity has a PSK here: NVMe/TCP has no certificate handshake
            throw new TlsFatalAlert(AlertDescription.handshake_failure, "no configured PSK for the identities offered"
                + " (a host needs hostKeys[].tlsKey on the subsystem its identity names; for the discovery NQN,"
                + " discovery.hostKeys[].tlsKey)");
        }
    }

    /**
     * The JDK's crypto (its AES-GCM has the CPU's instructions), except ChaCha20-Poly1305: Bouncy Castle's JCA
     * cipher for it takes the ChaCha7539 and Poly1305 primitives the JDK does not name, so that suite (only for a
     * SHA-384 PSK with a SHA-256 binder, see {@link Server#getExternalPSK}) takes them from Bouncy Castle's provider,
     * handed to this crypto alone (nothing is registered in the JVM).
     */
    private static final class Crypto extends JcaTlsCrypto {
        Crypto(SecureRandom random) {
            super(new DefaultJcaJceHelper(), random, random);
        }

        @Override
        public boolean hasEncryptionAlgorithm(int encryptionAlgorithm) {
            return encryptionAlgorithm == EncryptionAlgorithm.CHACHA20_POLY1305 || super.hasEncryptionAlgorithm(
                encryptionAlgorithm);
        }

        /** AES-GCM initialised with a GCMParameterSpec per record ({@link TlsAesGcm}); other AEADs as Bouncy Castle's. */
        @Override
        protected TlsAEADCipherImpl createAEADCipher(String cipherName, String algorithm, int keySize,
                                                     boolean isEncrypting) throws GeneralSecurityException {
            return "AES/GCM/NoPadding".equals(cipherName) ? new TlsAesGcm(isEncrypting)
                : super.createAEADCipher(cipherName, algorithm, keySize, isEncrypting);
        }

        @Override
        public TlsCipher createCipher(TlsCryptoParameters params, int encryptionAlgorithm, int macAlgorithm)
            throws IOException {
            return encryptionAlgorithm == EncryptionAlgorithm.CHACHA20_POLY1305
                ? ChaCha.CRYPTO.createCipher(params, encryptionAlgorithm, macAlgorithm)
                : super.createCipher(params, encryptionAlgorithm, macAlgorithm);
        }
    }

    /** Made at the first ChaCha20-Poly1305 connection: the provider takes seconds to build on a loaded machine. */
    private static final class ChaCha {
        static final JcaTlsCrypto CRYPTO = new JcaTlsCryptoProvider().setProvider(new BouncyCastleProvider())
            .create(new SecureRandom());
    }
}
