package checkpoint

// The kinds of notice a checkpoint task or connector shows in its status (kmtype.Notice.Kind). Dashboards and
// metrics key on them; the message says the same for people.
const (
	NoticeNoGroups           = "no_groups"           // the checkpoint connector found no consumer group to checkpoint
	NoticeCheckpointsProblem = "checkpoints_problem" // checkpoints could not be written to the checkpoints topic (retrying)
	NoticeGroupsUnreadable   = "groups_unreadable"   // consumer groups or their offsets could not be read (retrying)
	NoticeGroupNotShown      = "group_not_shown"     // a group's translations cannot be kept for the API (its id is not valid UTF-8 or holds NUL); its checkpoints are still written
)
