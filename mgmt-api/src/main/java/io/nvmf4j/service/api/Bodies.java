package io.nvmf4j.service.api;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

import java.math.BigInteger;
import java.util.List;

/** Request bodies that are not config fragments. */
final class Bodies {
    private Bodies() {
    }

    /** PATCH /bdevs/{name}. */
    @JsonIgnoreProperties(ignoreUnknown = false)
    public static final class Grow {
        public Long numBlocks;
    }

    /** PATCH /subsystems/{nqn}. */
    @JsonIgnoreProperties(ignoreUnknown = false)
    public static final class SubsystemPatch {
        public Boolean allowAnyHost;
    }

    /** PATCH /subsystems/{nqn}/namespaces/{nsid}. */
    @JsonIgnoreProperties(ignoreUnknown = false)
    public static final class NamespacePatch {
        /** The ANA group (ANAGRPID) to move the namespace to, while it serves. */
        public Integer anaGroup;
    }

    /** POST /subsystems/{nqn}/namespaces/{nsid}/hosts. */
    @JsonIgnoreProperties(ignoreUnknown = false)
    public static final class Host {
        public String nqn;
    }

    /**
     * POST /subsystems/{nqn}/hosts: the host NQN, and the key files when it must authenticate with DH-HMAC-CHAP or
     * connects over NVMe/TCP TLS.
     */
    @JsonIgnoreProperties(ignoreUnknown = false)
    public static final class AllowedHost {
        public String nqn;
        /** Absolute path of the file with the host's DHHC-1 key (mode 0600); the host must then authenticate. */
        public String dhchapKey;
        /** Absolute path of the file with the controller's DHHC-1 key (mode 0600): bidirectional authentication. */
        public String dhchapCtrlKey;
        /** Absolute path of the file with the host's NVMe/TCP TLS PSK (NVMeTLSkey-1 interchange format, mode 0600). */
        public String tlsKey;
        /** How the host derives its TLS PSK: {@code libnvme} (the default) or {@code rfc8446}. */
        public String tlsKeyDerivation;
    }

    /** POST /discovery/hosts: a host's TLS PSK for the discovery subsystem. */
    @JsonIgnoreProperties(ignoreUnknown = false)
    public static final class DiscoveryHost {
        public String nqn;
        /** Absolute path of the file with the host's NVMe/TCP TLS PSK (NVMeTLSkey-1 interchange format, mode 0600). */
        public String tlsKey;
        /** How the host derives its TLS PSK: {@code libnvme} (the default) or {@code rfc8446}. */
        public String tlsKeyDerivation;
    }

    /** POST /bdevs/{name}/errors: an injection into an error bdev (io.nvmf4j.engine.ErrorInjection). */
    @JsonIgnoreProperties(ignoreUnknown = false)
    public static final class ErrorInjection {
        /** read, write, flush, write-zeroes, deallocate or all. */
        public String ioType;
        /** eio, nospc, gone or timeout. */
        public String errorType;
        /** Commands to fail; 0 or absent: every one until DELETE. */
        public Integer count;
        /** errorType timeout only: how long a command is held before it fails (1..600000). */
        public Long timeoutMs;
    }

    /** PUT /subsystems/{nqn}/listeners/{transport}/{address}/{port}/ana/{group}. */
    @JsonIgnoreProperties(ignoreUnknown = false)
    public static final class AnaState {
        /** optimized, non-optimized, inaccessible, persistent-loss or change. */
        public String state;
    }

    /** POST /pools/{pool}/volumes. */
    @JsonIgnoreProperties(ignoreUnknown = false)
    public static final class Volume {
        /** The volume's name: letters, digits, '.', '_', '-'; its bdev is {@code <pool>/<name>}. */
        public String name;
        /** Its size in bytes: positive, a multiple of the block size. */
        public BigInteger size;
        /** 512 or 4096; absent: 512. */
        public Integer blockSize;
        /** Every block allocated now (refused when the pool has no room); absent or false: thin. */
        public Boolean thick;
    }

    /** PATCH /pools/{pool}/volumes/{volume}: a grow is live, a shrink is refused while a namespace uses it. */
    @JsonIgnoreProperties(ignoreUnknown = false)
    public static final class Resize {
        /** The new size in bytes, a multiple of the volume's block size. */
        public BigInteger size;
    }

    /** POST .../snapshots (the snapshot's name) and POST .../snapshots/{snapshot}/clone (the new volume's name). */
    @JsonIgnoreProperties(ignoreUnknown = false)
    public static final class Named {
        /** Letters, digits, '.', '_', '-'. */
        public String name;
    }

    /** POST /pools/{pool}/group-snapshots: one snapshot of each volume, taken at one instant. */
    @JsonIgnoreProperties(ignoreUnknown = false)
    public static final class GroupSnapshot {
        /** The snapshots' name (each volume gets a snapshot of that name) and the group's. */
        public String name;
        /** The volumes of the pool to snapshot together. */
        public List<String> volumes;
    }
}
