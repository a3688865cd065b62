package kafka

import (
	"context"
	"errors"
	"fmt"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// ACLPatternType is how an ACL's resource name matches, under Kafka's name (PatternType).
type ACLPatternType string

// The pattern types an ACL binding can have.
const (
	ACLPatternLiteral  ACLPatternType = "LITERAL"
	ACLPatternPrefixed ACLPatternType = "PREFIXED"
)

// ACLOperation is an ACL's operation under Kafka's name (AclOperation): "ALL", "READ", "WRITE", "DESCRIBE",
// "DESCRIBE_CONFIGS", ... Every operation librdkafka knows round-trips through TopicACLs and CreateACLs.
type ACLOperation string

// The operations MM2's ACL sync treats specially.
const (
	ACLOperationAll   ACLOperation = "ALL"
	ACLOperationRead  ACLOperation = "READ"
	ACLOperationWrite ACLOperation = "WRITE"
)

// ACLPermission is an ACL's permission type under Kafka's name (AclPermissionType).
type ACLPermission string

// The permission types of an ACL binding.
const (
	ACLAllow ACLPermission = "ALLOW"
	ACLDeny  ACLPermission = "DENY"
)

// TopicACL is one ACL binding on a TOPIC resource.
type TopicACL struct {
	Topic       string // the resource name; "*" is the wildcard
	PatternType ACLPatternType
	Principal   string // e.g. "User:alice"
	Host        string // "*" for any host
	Operation   ACLOperation
	Permission  ACLPermission
}

// TopicACLs describes every ACL binding on TOPIC resources, of any pattern type. A cluster without an
// authorizer answers with an error satisfying IsSecurityDisabled.
func (a *Admin) TopicACLs(ctx context.Context) ([]TopicACL, error) {
	ctx, cancel := a.ctx(ctx)
	defer cancel()
	filter := ckafka.ACLBindingFilter{
		Type:                ckafka.ResourceTopic,
		ResourcePatternType: ckafka.ResourcePatternTypeAny,
		Operation:           ckafka.ACLOperationAny,
		PermissionType:      ckafka.ACLPermissionTypeAny,
	}
	res, err := a.a.DescribeACLs(ctx, filter, ckafka.SetAdminRequestTimeout(a.Timeout))
	if err != nil {
		return nil, fmt.Errorf("describe topic ACLs: %w", a.cause(ctx, err))
	}
	if res.Error.Code() != ckafka.ErrNoError {
		return nil, fmt.Errorf("describe topic ACLs: %w", res.Error)
	}
	out := make([]TopicACL, 0, len(res.ACLBindings))
	for _, b := range res.ACLBindings {
		if b.Type != ckafka.ResourceTopic {
			continue
		}
		out = append(out, TopicACL{
			Topic:       b.Name,
			PatternType: ACLPatternType(b.ResourcePatternType.String()),
			Principal:   b.Principal,
			Host:        b.Host,
			Operation:   ACLOperation(b.Operation.String()),
			Permission:  ACLPermission(b.PermissionType.String()),
		})
	}
	return out, nil
}

// CreateACLs creates topic ACL bindings. Creating a binding that already exists succeeds. The returned error
// joins the per-binding failures (each naming its binding), or is the failure of the request as a whole.
func (a *Admin) CreateACLs(ctx context.Context, acls []TopicACL) error {
	if len(acls) == 0 {
		return nil
	}
	bindings := make(ckafka.ACLBindings, 0, len(acls))
	for _, acl := range acls {
		b, err := toACLBinding(acl)
		if err != nil {
			return err
		}
		bindings = append(bindings, b)
	}
	ctx, cancel := a.ctx(ctx)
	defer cancel()
	res, err := a.a.CreateACLs(ctx, bindings, ckafka.SetAdminRequestTimeout(a.Timeout))
	if err != nil {
		return fmt.Errorf("create ACLs: %w", a.cause(ctx, err))
	}
	var errs []error
	for i, r := range res {
		if r.Error.Code() != ckafka.ErrNoError && i < len(acls) {
			errs = append(errs, fmt.Errorf("create ACL %+v: %w", acls[i], r.Error))
		}
	}
	return errors.Join(errs...)
}

func toACLBinding(acl TopicACL) (ckafka.ACLBinding, error) {
	pattern, err := ckafka.ResourcePatternTypeFromString(string(acl.PatternType))
	if err != nil {
		return ckafka.ACLBinding{}, fmt.Errorf("create ACL on topic %s: pattern type %q: %w", acl.Topic, acl.PatternType, err)
	}
	op, err := ckafka.ACLOperationFromString(string(acl.Operation))
	if err != nil {
		return ckafka.ACLBinding{}, fmt.Errorf("create ACL on topic %s: operation %q: %w", acl.Topic, acl.Operation, err)
	}
	perm, err := ckafka.ACLPermissionTypeFromString(string(acl.Permission))
	if err != nil {
		return ckafka.ACLBinding{}, fmt.Errorf("create ACL on topic %s: permission %q: %w", acl.Topic, acl.Permission, err)
	}
	return ckafka.ACLBinding{
		Type: ckafka.ResourceTopic, Name: acl.Topic, ResourcePatternType: pattern,
		Principal: acl.Principal, Host: acl.Host, Operation: op, PermissionType: perm,
	}, nil
}
