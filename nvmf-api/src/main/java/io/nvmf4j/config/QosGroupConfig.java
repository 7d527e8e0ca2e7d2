package io.nvmf4j.config;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;

import java.util.ArrayList;
import java.util.List;

/**
 * A QoS group (a tenant): namespaces, of any subsystems, whose I/O together shares the group's {@link QosLimits}. A
 * namespace is in at most one group; removing a namespace takes it out of its group.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = false)
public final class QosGroupConfig {
    /** 1..63 of A-Z a-z 0-9 . _ - not starting with '.' or '-'. */
    public String name;
    public List<Member> namespaces = new ArrayList<>();
    public QosLimits limits;

    /** A namespace of the group, by subsystem NQN and nsid. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    @JsonIgnoreProperties(ignoreUnknown = false)
    public static final class Member {
        public String nqn;
        public int nsid;

        public Member() {
        }

        public Member(String nqn, int nsid) {
            this.nqn = nqn;
            this.nsid = nsid;
        }

        public boolean is(String nqn, int nsid) {
            return this.nsid == nsid && nqn.equals(this.nqn);
        }
    }

    public QosGroupConfig() {
    }

    public QosGroupConfig(String name, List<Member> namespaces, QosLimits limits) {
        this.name = name;
        this.namespaces = namespaces;
        this.limits = limits;
    }
}
