package protocol

import "reflect"

// Test hooks: the lazily built codecs of an API and eagerly built ones.

func LazyTypes(k ApiKey) (req, res []reflect.Type, flexReq, flexRes []bool) {
	t := typesOfKey(k)
	for _, m := range t.requests {
		req, flexReq = append(req, m.gotype), append(flexReq, m.flexible)
	}
	for _, m := range t.responses {
		res, flexRes = append(res, m.gotype), append(flexRes, m.flexible)
	}
	return
}

func Registered(k ApiKey) (req, res reflect.Type, ok bool) {
	l := lazyTypes[k]
	if l == nil {
		return nil, nil, false
	}
	return l.req, l.res, true
}

func EagerVersions(t reflect.Type) (versions []int16, flexible []bool) {
	for _, m := range makeTypes(t) {
		versions, flexible = append(versions, m.version), append(flexible, m.flexible)
	}
	return
}

func NumApis() int { return int(numApis) }
