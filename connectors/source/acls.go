package source

import (
	"context"
	"fmt"

	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/mirror"
)

// remoteTopicACLs is MM2's ACL transformation (syncTopicAcls / targetAclBinding): of the source cluster's
// topic ACL bindings it keeps the LITERAL ones on replicated topics (a literal "*" is judged as a topic named
// "*"), drops ALLOW WRITE, and re-targets each to the remote topic, downgrading ALLOW ALL to ALLOW READ.
// DENY bindings are copied whatever their operation. The point is that only MM2 writes to remote topics
// while the source's readers can read them. Duplicates that the downgrade creates are dropped.
func remoteTopicACLs(acls []kafka.TopicACL, selector mirror.TopicSelector, sourceAlias string) []kafka.TopicACL {
	var out []kafka.TopicACL
	seen := make(map[kafka.TopicACL]bool)
	for _, acl := range acls {
		if acl.PatternType != kafka.ACLPatternLiteral {
			continue
		}
		if acl.Permission == kafka.ACLAllow && acl.Operation == kafka.ACLOperationWrite {
			continue
		}
		if !selector.ShouldReplicate(acl.Topic) {
			continue
		}
		remote := acl
		remote.Topic = selector.Policy.FormatRemoteTopic(sourceAlias, acl.Topic)
		if acl.Permission == kafka.ACLAllow && acl.Operation == kafka.ACLOperationAll {
			remote.Operation = kafka.ACLOperationRead
		}
		if !seen[remote] {
			seen[remote] = true
			out = append(out, remote)
		}
	}
	return out
}

// syncTopicACLs copies the source's topic ACLs to the remote topics (see remoteTopicACLs). It only ever adds
// ACLs: revoking one on the source does not revoke it on the target. A cluster without an authorizer is
// reported once, then skipped quietly. (librdkafka 2.11 reports no error when it describes the ACLs of a
// cluster without an authorizer, just none, so in practice a source without one shows up as "nothing to
// sync"; the branch stays for clients that do report it, as Java's does.)
func (r *sourcePlanner) syncTopicACLs(ctx context.Context) error {
	acls, err := r.source.TopicACLs(ctx)
	if kafka.IsSecurityDisabled(err) {
		r.noAuthorizer(&r.noSourceAuthorizer, "source", r.sourceAlias)
		return nil
	}
	if err != nil {
		return fmt.Errorf("describe topic ACLs on source cluster %s: %w", r.sourceAlias, err)
	}
	remote := remoteTopicACLs(acls, r.selector, r.sourceAlias)
	if err := r.target.CreateACLs(ctx, remote); err != nil {
		switch {
		case onlySecurityDisabled(err):
			r.noAuthorizer(&r.noTargetAuthorizer, "target", r.targetAlias)
			return nil
		case plannerTransient(err):
			return fmt.Errorf("create topic ACLs on target cluster %s: %w", r.targetAlias, err)
		}
		r.log.Warn("could not sync some topic ACLs", "cluster", r.targetAlias, "error", err)
		return nil
	}
	r.log.Debug("synced topic ACLs", "bindings", len(remote), "cluster", r.targetAlias)
	return nil
}

// noAuthorizer says once, at info, that a cluster has no authorizer, and quietly afterwards.
func (r *sourcePlanner) noAuthorizer(said *bool, side, alias string) {
	if *said {
		r.log.Debug("cluster still has no ACL authorizer; skipping topic ACL sync", "side", side, "cluster", alias)
		return
	}
	*said = true
	r.log.Info("no ACL authorizer is configured on the "+side+" cluster, so no topic ACLs are synced; "+
		"consider setting sync.topic.acls.enabled=false", "cluster", alias)
}

// onlySecurityDisabled reports whether err, possibly a join of per-binding errors, says nothing but "no
// authorizer".
func onlySecurityDisabled(err error) bool {
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range joined.Unwrap() {
			if !kafka.IsSecurityDisabled(e) {
				return false
			}
		}
		return len(joined.Unwrap()) > 0
	}
	return kafka.IsSecurityDisabled(err)
}
