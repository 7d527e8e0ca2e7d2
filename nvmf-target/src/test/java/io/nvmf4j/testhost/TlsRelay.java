package io.nvmf4j.testhost;

import org.bouncycastle.tls.AbstractTlsClient;
import org.bouncycastle.tls.BasicTlsPSKExternal;
import org.bouncycastle.tls.CipherSuite;
import org.bouncycastle.tls.PRFAlgorithm;
import org.bouncycastle.tls.ProtocolVersion;
import org.bouncycastle.tls.TlsAuthentication;
import org.bouncycastle.tls.TlsClientProtocol;
import org.bouncycastle.tls.TlsCredentials;
import org.bouncycastle.tls.TlsFatalAlert;
import org.bouncycastle.tls.TlsPSKExternal;
import org.bouncycastle.tls.TlsServerCertificate;
import org.bouncycastle.tls.AlertDescription;
import org.bouncycastle.tls.crypto.TlsCrypto;
import org.bouncycastle.tls.crypto.impl.bc.BcTlsCrypto;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.List;
import java.util.Vector;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The TLS side of the test host: a loopback relay whose every accepted plain connection (from {@link TcpHost}) becomes
 * one TLS 1.3 connection to the target, made by Bouncy Castle's blocking client with one external PSK (psk_dhe_ke,
 * both NVMe/TCP cipher suites offered), bytes pumped both ways. Bouncy Castle's lightweight crypto here, not the
 * JCA provider the target uses, so the two ends do not share a cipher implementation.
 */
public final class TlsRelay implements AutoCloseable {
    private final ServerSocket listener = new ServerSocket();
    private final String address;
    private final int targetPort;
    private final byte[] identity;
    private final byte[] psk;
    private final int prf;
    private final int[] suites;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final AtomicInteger handshakes = new AtomicInteger();
    private final AtomicInteger failures = new AtomicInteger();
    /** TLS records written to the target: Bouncy Castle's client seals a write into records of up to 16 KiB. */
    private final java.util.concurrent.atomic.AtomicLong recordsUp = new java.util.concurrent.atomic.AtomicLong();

    /**
     * @param hash 1 (SHA-256) or 2 (SHA-384), the PSK's hash from its identity
     */
    public TlsRelay(String address, int targetPort, String identity, byte[] psk, int hash) throws IOException {
        this(address, targetPort, identity, psk, hash, CipherSuite.TLS_AES_128_GCM_SHA256,
            CipherSuite.TLS_AES_256_GCM_SHA384);
    }

    /**
     * A client whose PSK goes with {@code hash} (the binder's and the key schedule's, whatever the identity says)
     * and that offers {@code suites}: for example the Linux host's tlshd on GnuTLS before 3.8.11, a SHA-256 binder
     * for every PSK.
     */
    public TlsRelay(String address, int targetPort, String identity, byte[] psk, int hash, int... suites)
        throws IOException {
        this.suites = suites.clone();
        this.address = address;
        this.targetPort = targetPort;
        this.identity = identity.getBytes(StandardCharsets.UTF_8);
        this.psk = psk.clone();
        this.prf = hash == 1 ? PRFAlgorithm.tls13_hkdf_sha256 : PRFAlgorithm.tls13_hkdf_sha384;
        listener.bind(new InetSocketAddress(address, 0));
        Thread t = new Thread(this::acceptLoop, "tls-relay-" + listener.getLocalPort());
        t.setDaemon(true);
        t.start();
    }

    /** The port {@link TcpHost} connects to. */
    public int port() {
        return listener.getLocalPort();
    }

    /** TLS handshakes that completed, and that failed. */
    public int handshakes() {
        return handshakes.get();
    }

    public int failures() {
        return failures.get();
    }

    /** TLS records sent to the target so far (a write of up to 16 KiB is one record), all connections together. */
    public long recordsUp() {
        return recordsUp.get();
    }

    private void acceptLoop() {
        while (!listener.isClosed()) {
            try {
                Socket plain = listener.accept();
                sockets.add(plain);
                Thread t = new Thread(() -> relay(plain), "tls-relay-conn-" + plain.getPort());
                t.setDaemon(true);
                t.start();
            } catch (IOException e) {
                return;
            }
        }
    }

    private void relay(Socket plain) {
        try (Socket s = new Socket()) {
            sockets.add(s);
            s.setTcpNoDelay(true);
            s.connect(new InetSocketAddress(address, targetPort), 5000);
            TlsClientProtocol tls = new TlsClientProtocol(s.getInputStream(), s.getOutputStream());
            try {
                tls.connect(new Client());
            } catch (IOException e) {
                failures.incrementAndGet();
                throw e;
            }
            handshakes.incrementAndGet();
            InputStream plainIn = plain.getInputStream();
            Thread up = new Thread(() -> pump(plainIn, tls.getOutputStream(), plain, s, true), "tls-relay-up");
            up.setDaemon(true);
            up.start();
            pump(tls.getInputStream(), plain.getOutputStream(), plain, s, false);
        } catch (IOException e) {
            // the connection ends: the host sees its socket close
        } finally {
            close(plain);
        }
    }

    private void pump(InputStream in, OutputStream out, Socket a, Socket b, boolean up) {
        byte[] buf = new byte[64 * 1024];
        try {
            for (int n; (n = in.read(buf)) > 0; ) {
                out.write(buf, 0, n);
                out.flush();
                if (up) {
                    recordsUp.addAndGet((n + (1 << 14) - 1) >> 14);
                }
            }
        } catch (IOException e) {
            // either side closed
        } finally {
            close(a);
            close(b);
        }
    }

    private static void close(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }

    @Override
    public void close() throws IOException {
        listener.close();
        sockets.forEach(TlsRelay::close);
    }

    private final class Client extends AbstractTlsClient {
        Client() {
            super(CRYPTO);
        }

        @Override
        protected ProtocolVersion[] getSupportedVersions() {
            return ProtocolVersion.TLSv13.only();
        }

        @Override
        protected int[] getSupportedCipherSuites() {
            return suites.clone();
        }

        @Override
        public Vector getExternalPSKs() {
            Vector<TlsPSKExternal> v = new Vector<>();
            v.add(new BasicTlsPSKExternal(identity, getCrypto().createSecret(psk), prf));
            return v;
        }

        @Override
        public TlsAuthentication getAuthentication() {
            return pskOnly();
        }
    }

    /** A TLS client's authentication for NVMe/TCP: PSK only, so a server certificate is refused. */
    public static TlsAuthentication pskOnly() {
        return new TlsAuthentication() {
            @Override
            public void notifyServerCertificate(TlsServerCertificate c) throws IOException {
                throw new TlsFatalAlert(AlertDescription.unexpected_message, "NVMe/TCP TLS is PSK only");
            }

            @Override
            public TlsCredentials getClientCredentials(org.bouncycastle.tls.CertificateRequest r) {
                return null;
            }
        };
    }

    private static final TlsCrypto CRYPTO = new BcTlsCrypto(new SecureRandom());
}
