// Package httpauth is Hadoop's HTTP authentication filter
// (AuthenticationFilter) for strata's web endpoints: with
// hadoop.http.authentication.type=simple it changes nothing (the pages and
// WebHDFS trust user.name, as today); with kerberos every request must
// authenticate by SPNEGO (RFC 4559, "Authorization: Negotiate ...",
// accepted with gokrb5 against the HTTP service's keytab) or carry a valid
// hadoop.auth cookie the filter signed earlier.
//
// The cookie is Hadoop's signed AuthToken: the value
// u=<user>&p=<principal>&t=kerberos&e=<expiry, ms since the epoch>&s=<sig>,
// where sig is the standard base64 of HMAC-SHA256 over everything before
// "&s=" with the signature secret (hadoop.http.authentication.signature.secret.file,
// else a random secret per process). A cookie that does not verify, has
// expired, or names another authentication type is ignored: the request is
// challenged again.
//
// Invariants: in kerberos mode no handler behind the filter runs without
// an authenticated user, which it reads with User (the request context);
// the user.name parameter is removed from the query before a handler sees
// it, so code that still reads user.name falls back to its default user,
// never to a name the client chose. Authorization headers are bounded
// (MaxAuthHeader) and cookies too (MaxCookie) before they are decoded.
// Times come from Config.Now, so cookie expiry is testable without
// waiting (ticket lifetimes are checked by gokrb5 against the real clock).
package httpauth
