package io.nvmf4j.transport.tcp;

import io.nvmf4j.auth.KeyFiles;
import io.nvmf4j.auth.TlsPsk;
import io.nvmf4j.config.HostKeyConfig;
import io.nvmf4j.config.LogText;
import io.nvmf4j.core.Subsystem;
import io.nvmf4j.core.Target;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;

/**
 * Finds the TLS PSK for an identity a host offers: the identity names the host and subsystem NQNs, the subsystem's
 * {@code hostKeys} entry for that host names the key file, read again at every handshake (so a rotated file applies to
 * the next connection, as the DH-HMAC-CHAP keys do). An identity naming the discovery NQN takes the host's entry in
 * the config's {@code discovery.hostKeys} (the discovery subsystem holds them as a subsystem holds its own).
 */
final class TlsPsks {
    private static final Logger LOG = LoggerFactory.getLogger(TlsPsks.class);

    private final Target target;

    TlsPsks(Target target) {
        this.target = target;
    }

    /** A key for one offered identity. */
    record Found(TlsPsk.Identity identity, byte[] psk) {
    }

    /** The TLS PSK for {@code text}, or null (logged at DEBUG: the host may offer another identity that fits). */
    Found find(String text, String peer) {
        TlsPsk.Identity id = TlsPsk.Identity.parse(text);
        if (id == null) {
            LOG.debug("TLS from {}: identity '{}' is no NVMe0R0x/NVMe1R0x retained-PSK identity", peer,
                LogText.escape(text));
            return null;
        }
        Subsystem s = target.subsystem(id.subnqn());
        HostKeyConfig k = s == null ? null : s.hostKey(id.hostnqn());
        if (k == null || k.tlsKey == null) {
            LOG.debug("TLS from {}: no TLS PSK for host {} on {}", peer, LogText.escape(id.hostnqn()),
                LogText.escape(id.subnqn()));
            return null;
        }
        try {
            byte[] psk = KeyFiles.readTlsPsk(k.tlsKey).tlsPsk(TlsPsk.Derivation.of(k.tlsKeyDerivation), id);
            if (psk == null) {
                LOG.debug("TLS from {}: the PSK of host {} on {} does not give identity '{}' (hash or digest differ)",
                    peer, LogText.escape(id.hostnqn()), LogText.escape(id.subnqn()), LogText.escape(text));
            }
            return psk == null ? null : new Found(id, psk);
        } catch (IOException | IllegalArgumentException e) {
            LOG.warn("TLS from {}: host {} on {}: {}", peer, LogText.escape(id.hostnqn()), LogText.escape(id.subnqn()),
                e.getMessage());
            return null;
        }
    }
}
