package io.nvmf4j.auth;

import io.nvmf4j.testhost.DhchapHost;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What costs milliseconds in DH-HMAC-CHAP is left to the {@link AuthSession.Work} a Send returns, to be run off the
 * queue's poll-group thread: the key files read again and the DH key pair generated at a Negotiate (ffdhe8192 here),
 * the DH shared secret at a Reply. The session goes on only when the work is finished, and takes no message before.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class AuthSessionWorkTest {
    private static final String HOST = "nqn.2014-08.org.nvmexpress:uuid:3f1b4a52-8c1e-4d0a-9a57-0000000000f2";
    private static final String SUB = "nqn.2024-01.io.nvmf4j:work";
    private static final int FFDHE8192 = 5;

    private final byte[] secret = new byte[32];
    private final HostKeys keys;
    private final FixedKeys source;

    AuthSessionWorkTest() {
        new SplittableRandom(3).nextBytes(secret);
        keys = new HostKeys(DhchapKey.parse(DhchapKey.format(1, secret)), null);
        source = new FixedKeys(keys, AuthPolicy.of(null, null, false));
    }

    private AuthSession session() {
        return new AuthSession(HOST, SUB, true, source, 30_000);
    }

    /** Runs {@code work} on a thread of its own, as the target's auth threads do, and returns that thread. */
    private static Thread runElsewhere(AuthSession.Work work) throws InterruptedException {
        Thread t = new Thread(work, "auth-work-test");
        t.start();
        t.join();
        return t;
    }

    @Test
    void keyReadsAndDiffieHellmanAreLeftToTheWork() throws Exception {
        AuthSession s = session();
        AuthSession.Work negotiate = s.send(DhchapHost.negotiate(1, new int[]{1}, new int[]{FFDHE8192}));
        assertThat(negotiate).as("a Negotiate leaves the key read and the DH key pair to its work").isNotNull();
        assertThat(source.reloadedOn.get()).as("the key files are not read in send").isNull();
        Thread worker = runElsewhere(negotiate);
        assertThat(source.reloadedOn.get()).as("read on the work's thread").isSameAs(worker);
        negotiate.finish();
        byte[] challenge = s.receive(DhchapHost.AL);
        assertThat(challenge[1]).as("Challenge").isEqualTo((byte) AuthMessages.CHALLENGE);
        assertThat(challenge[9]).as("DHGID ffdhe8192").isEqualTo((byte) FFDHE8192);

        DhchapHost host = new DhchapHost(HOST, SUB, 1, secret, 0, null, id -> DhGroup.byId(id).prime());
        AuthSession.Work reply = s.send(host.new Exchange(1, challenge).buildReply(false));
        assertThat(reply).as("a Reply with a DH value leaves the shared secret to its work").isNotNull();
        assertThat(s.authenticated()).as("not before the work is done").isFalse();
        runElsewhere(reply);
        reply.finish();
        assertThat(s.authenticated()).isTrue();
        assertThat(s.takeFailure()).isZero();
    }

    @Test
    void aMessageWhileTheWorkRunsFailsTheQueue() {
        AuthSession s = session();
        AuthSession.Work negotiate = s.send(DhchapHost.negotiate(2, new int[]{1}, new int[]{1}));
        assertThat(negotiate).isNotNull();
        s.receive(DhchapHost.AL);
        assertThat(s.takeFailure()).as("incorrect protocol message").isEqualTo(AuthMessages.INCORRECT_MESSAGE);
        negotiate.run();
        negotiate.finish(); // given up on: finishes as nothing
        assertThat(s.authenticated()).isFalse();
        assertThat(s.step()).isEqualTo(AuthMessages.FAILURE2);
    }
}
