package checkpoint

import "github.com/kmirror/kmirror/kmtype"

// rangeQueries collects offset map lookups once each: groups at the same position (often the log end) share
// one.
type rangeQueries struct {
	list  []kmtype.RangeQuery
	index map[kmtype.RangeQuery]int
}

// add returns q's index in list, adding it there when it is new.
func (s *rangeQueries) add(q kmtype.RangeQuery) int {
	if i, ok := s.index[q]; ok {
		return i
	}
	if s.index == nil {
		s.index = map[kmtype.RangeQuery]int{}
	}
	s.index[q] = len(s.list)
	s.list = append(s.list, q)
	return len(s.list) - 1
}
