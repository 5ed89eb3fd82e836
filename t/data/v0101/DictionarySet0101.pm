# The reader and writer of dictionary sets as release 0.101 shipped them,
# kept to prove that sets written now stay readable by it. Not installed.
# Frozen: it calls nothing of the current distribution (what 0.101 asked
# of its engine is written out below as 0.101 did it), and its clock is
# its own: $CMRXFixture::DictionarySet0101::Clock (a code reference giving
# epoch seconds), else perl's time. Nothing outside this package changes.
package CMRXFixture::DictionarySet0101;

use strict;
use warnings;

use Carp ();
use Digest::SHA ();
use Fcntl qw(:flock O_WRONLY O_CREAT O_EXCL);
use File::Spec ();
use IO::Handle ();
use POSIX ();

our $VERSION = '0.101';

our $FORMAT        = 1;                       # the format version this module reads and writes
our $MANIFEST_NAME = 'manifest';
my $MAGIC_WORD     = 'cmrx-dictionary-set';
my $LOCK_NAME      = '.lock';
my $DICT_MAGIC     = "\x37\xa4\x30\xec";      # zstd dictionary magic, little-endian
my $DICT_HEADER    = 8;                       # magic and ID
my $MAX_ID         = 4294967295;              # IDs are 32-bit, 0 means none
# New IDs are drawn at random from here up: an ID below takes only 1 or 2
# bytes in a frame, and is what hand-numbered sets use; every ID from here
# takes 4, so the draw spends no byte that a smaller random range would save.
my $FIRST_RANDOM_ID = 65536;
my $RANDOM_ID_BYTES = 4;
my $ID_DRAWS        = 1000;                    # draws before new_id gives up
# The engine's level ranges as 0.101 shipped them (cmrx.h).
my %LEVELS         = (zstd_min => -7, zstd_max => 22, gzip_min => 0, gzip_max => 12);
my $MIN_LEVEL      = $LEVELS{zstd_min};
my $MAX_LEVEL      = $LEVELS{zstd_max};
my $IDENTITY_BYTES = 16;
my $MAX_FILE_STEM  = 40;                      # bytes of the prefix kept in a file name
my %FALLBACK_METHODS = (zstd => 1, gzip => 1);
my %GZIP_LEVELS  = map { ($_ => 1) } $LEVELS{gzip_min} .. $LEVELS{gzip_max};    # libdeflate's
my %STATES       = (current => 1, retired => 1);

# Fields of each kind of line, in the order they are written; any other
# field (a lower-case name) is kept as it is and written after these.
my @SET_FIELDS        = qw(id created);
my @FALLBACK_FIELDS   = qw(method level savings samples measured);
my @DICTIONARY_FIELDS = qw(id prefix state current_from file level size sha256 savings samples trained retired);
my @REMOVED_FIELDS    = qw(id prefix removed);
my %REQUIRED = (
    set        => [qw(id)],
    fallback   => [qw(method level)],
    dictionary => [qw(id prefix state file level size sha256)],
    removed    => [qw(id)],
);

# ---- values in the manifest ------------------------------------------------

# Bytes outside printable ASCII, and %, are written as %XX, so that a value
# never holds a space and the file reads as text.
sub _encode_value {
    my ($v) = @_;
    $v =~ s/([^\x21-\x24\x26-\x7e])/sprintf '%%%02X', ord $1/ge;
    return $v;
}

sub _decode_value {
    my ($v) = @_;
    $v =~ s/%([0-9A-Fa-f]{2})/chr hex $1/ge;
    return $v;
}

sub _is_int     { defined $_[0] && $_[0] =~ /\A(?:0|-?[1-9][0-9]{0,9})\z/ }
sub _is_count   { defined $_[0] && $_[0] =~ /\A(?:0|[1-9][0-9]{0,15})\z/ }
sub _is_percent { defined $_[0] && $_[0] =~ /\A-?[0-9]{1,3}(?:\.[0-9]{1,6})?\z/ }
sub _is_date    { defined $_[0] && $_[0] =~ /\A[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z\z/ }
sub _is_id      { _is_count($_[0]) && $_[0] >= 1 && $_[0] <= $MAX_ID }
sub _is_level   { _is_int($_[0]) && $_[0] >= $MIN_LEVEL && $_[0] <= $MAX_LEVEL }
sub _is_file    { defined $_[0] && $_[0] =~ /\A[A-Za-z0-9_][A-Za-z0-9_.-]{0,200}\z/ }

# A date as the manifest writes it: ISO 8601 in UTC, to the second. Takes
# epoch seconds or such a string.
sub _date {
    my ($what, $v) = @_;
    return $v if _is_date($v);
    Carp::croak("$what must be epoch seconds or YYYY-MM-DDTHH:MM:SSZ, not " . _shown($v))
        unless _is_count($v);
    return POSIX::strftime('%Y-%m-%dT%H:%M:%SZ', gmtime $v);
}

sub _shown { defined $_[0] ? "'" . _encode_value($_[0]) . "'" : 'undef' }

# ---- reading ---------------------------------------------------------------

sub _manifest_path { File::Spec->catfile($_[0], $MANIFEST_NAME) }

sub _slurp {
    my ($path) = @_;
    open my $fh, '<', $path or return;
    binmode $fh;
    my $bytes = do { local $/; <$fh> };
    close $fh;
    return $bytes;
}

sub read {
    my ($class, $dir) = @_;
    Carp::croak("$class->read: the folder of a dictionary set is needed")
        unless defined $dir && length $dir;
    my $path = _manifest_path($dir);
    my $bytes = _slurp($path);
    Carp::croak("$dir is not a dictionary set: cannot read $path: $!") unless defined $bytes;
    my $self = eval { _parse($dir, $bytes) };
    unless ($self) {
        (my $why = $@) =~ s/\n\z//;
        Carp::croak("$path: $why");    # the message names the line
    }
    return bless $self, $class;
}

# The manifest's bytes, parsed and checked; dies with "line N: why".
sub _parse {
    my ($dir, $bytes) = @_;
    my %self = (dir => $dir, manifest_sha256 => Digest::SHA::sha256_hex($bytes),
                entries => [], removed => [], fallback => undef);
    my ($n, $format, $ended) = (0, undef, undef);
    my (%by_id, %by_file, %current);
    my @lines = split /\n/, $bytes, -1;
    die "line 1: empty: not a dictionary set manifest (or truncated to nothing)\n" unless length $bytes;
    die "truncated: the last line has no newline\n" if length $lines[-1];
    pop @lines;
    for my $line (@lines) {
        $n++;
        next if $line =~ /\A(?:#.*)?\z/;
        my $at = "line $n";
        die "$at: after the end line\n" if $ended;
        if (!defined $format) {
            die "$at: not a dictionary set manifest (it must start with '$MAGIC_WORD $FORMAT')\n"
                unless $line =~ /\A\Q$MAGIC_WORD\E ([0-9]+)\z/;
            $format = $1;
            die "$at: format $format is newer than this reader knows ($FORMAT): upgrade "
              . "Cache::Memcached::RustXS\n" if $format > $FORMAT;
            die "$at: format $format is unknown\n" if $format < 1;
            next;
        }
        my ($kind, @tokens) = split / /, $line;
        my %f;
        for my $t (@tokens) {
            die "$at: '$t' is not a field (name=value)\n" unless $t =~ /\A([a-z][a-z0-9_]*)=(.*)\z/s;
            die "$at: field $1 given twice\n" if exists $f{$1};
            $f{$1} = _decode_value($2);
        }
        for my $need (@{ $REQUIRED{$kind} || [] }) {
            die "$at: $kind line without its $need (truncated or edited?)\n" unless defined $f{$need};
        }
        if ($kind eq 'set') {
            die "$at: a second set line\n" if $self{identity};
            die "$at: set id must be 32 hexadecimal digits, not " . _shown($f{id}) . "\n"
                unless $f{id} =~ /\A[0-9a-f]{32}\z/;
            die "$at: created must be YYYY-MM-DDTHH:MM:SSZ\n"
                if defined $f{created} && !_is_date($f{created});
            $self{identity} = $f{id};
            $self{set_fields} = \%f;
        }
        elsif ($kind eq 'fallback') {
            die "$at: a second fallback line\n" if $self{fallback};
            _check_fallback(\%f, $at);
            $self{fallback} = \%f;
        }
        elsif ($kind eq 'dictionary') {
            die "$at: dictionary before the set line\n" unless $self{identity};
            _check_entry(\%f, $at);
            if (my $other = $by_id{ $f{id} }) {
                die "$at: dictionary ID $f{id} is listed twice (also for prefix "
                  . _shown($other->{prefix}) . "): two dictionaries with one ID are refused\n";
            }
            die "$at: file $f{file} is listed twice\n" if $by_file{ $f{file} };
            if ($f{state} eq 'current') {
                die "$at: prefix " . _shown($f{prefix}) . " has two current dictionaries ("
                  . "IDs $current{ $f{prefix} }{id} and $f{id})\n" if $current{ $f{prefix} };
                $current{ $f{prefix} } = \%f;
            }
            $by_id{ $f{id} } = $by_file{ $f{file} } = \%f;
            push @{ $self{entries} }, \%f;
        }
        elsif ($kind eq 'removed') {
            die "$at: removed before the set line\n" unless $self{identity};
            die "$at: removed id must be 1 to $MAX_ID, not " . _shown($f{id}) . "\n" unless _is_id($f{id});
            die "$at: removed must be YYYY-MM-DDTHH:MM:SSZ\n" if defined $f{removed} && !_is_date($f{removed});
            die "$at: dictionary ID $f{id} is listed twice (once removed): two dictionaries with one ID are refused\n"
                if $by_id{ $f{id} };
            $by_id{ $f{id} } = \%f;
            push @{ $self{removed} }, \%f;
        }
        elsif ($kind eq 'end') {
            die "$at: end line without the number of dictionaries\n"
                unless defined $f{dictionaries} && _is_count($f{dictionaries});
            my $have = @{ $self{entries} };
            die "$at: the end line counts $f{dictionaries} dictionaries, $have are listed (truncated?)\n"
                if $f{dictionaries} != $have;
            my $removed = defined $f{removed} ? $f{removed} : 0;
            die "$at: the end line counts " . _shown($removed) . ' removed dictionaries, '
              . @{ $self{removed} } . " are listed (truncated?)\n"
                unless _is_count($removed) && $removed == @{ $self{removed} };
            $ended = 1;
        }
        else {
            die "$at: unknown line '" . _encode_value($kind) . "'\n";
        }
    }
    die "not a dictionary set manifest (no '$MAGIC_WORD' line)\n" unless defined $format;
    die "no set line\n" unless $self{identity};
    die "truncated: no end line\n" unless $ended;
    $self{format} = $format;
    return \%self;
}

sub _check_fallback {
    my ($f, $at) = @_;
    die "$at: fallback method must be zstd or gzip, not " . _shown($f->{method}) . "\n"
        unless $FALLBACK_METHODS{ $f->{method} };
    if ($f->{method} eq 'zstd') {
        die "$at: fallback level must be a zstd level ($MIN_LEVEL to $MAX_LEVEL), not " . _shown($f->{level}) . "\n"
            unless _is_level($f->{level});
    }
    else {
        die "$at: fallback level must be a gzip level ($LEVELS{gzip_min} to $LEVELS{gzip_max}), not "
            . _shown($f->{level}) . "\n"
            unless _is_int($f->{level}) && $GZIP_LEVELS{ $f->{level} };
    }
    _check_measures($f, $at, 'measured');
    return;
}

sub _check_measures {
    my ($f, $at, $date) = @_;
    die "$at: savings must be a percentage (a decimal number), not " . _shown($f->{savings}) . "\n"
        if defined $f->{savings} && !_is_percent($f->{savings});
    die "$at: samples must be a count, not " . _shown($f->{samples}) . "\n"
        if defined $f->{samples} && !_is_count($f->{samples});
    die "$at: $date must be YYYY-MM-DDTHH:MM:SSZ, not " . _shown($f->{$date}) . "\n"
        if defined $f->{$date} && !_is_date($f->{$date});
    return;
}

sub _check_entry {
    my ($f, $at) = @_;
    die "$at: dictionary id must be 1 to $MAX_ID, not " . _shown($f->{id}) . "\n" unless _is_id($f->{id});
    die "$at: state must be current or retired, not " . _shown($f->{state}) . "\n" unless $STATES{ $f->{state} };
    die "$at: file must be a plain name inside the set's folder, not " . _shown($f->{file}) . "\n"
        unless _is_file($f->{file}) && $f->{file} ne $MANIFEST_NAME;
    die "$at: level must be a zstd level ($MIN_LEVEL to $MAX_LEVEL), not " . _shown($f->{level}) . "\n"
        unless _is_level($f->{level});
    die "$at: size must be a number of bytes, not " . _shown($f->{size}) . "\n"
        unless _is_count($f->{size}) && $f->{size} > $DICT_HEADER;
    die "$at: sha256 must be 64 lower-case hexadecimal digits\n" unless $f->{sha256} =~ /\A[0-9a-f]{64}\z/;
    _check_measures($f, $at, 'trained');
    die "$at: retired must be YYYY-MM-DDTHH:MM:SSZ, not " . _shown($f->{retired}) . "\n"
        if defined $f->{retired} && !_is_date($f->{retired});
    die "$at: current_from must be YYYY-MM-DDTHH:MM:SSZ, not " . _shown($f->{current_from}) . "\n"
        if defined $f->{current_from} && !_is_date($f->{current_from});
    return;
}

# ---- looking ---------------------------------------------------------------

sub dir      { $_[0]{dir} }
sub identity { $_[0]{identity} }
sub format_version { $_[0]{format} }

# The SHA-256 of the manifest as read or last written (undef for a set not
# written yet): Zstd's rescans tell by it whether a set changed.
sub _manifest_sha256 { $_[0]{manifest_sha256} }

sub _copy { my %c = %{ $_[0] }; return \%c }

sub entries { map { _copy($_) } @{ $_[0]{entries} } }

sub removed { map { _copy($_) } @{ $_[0]{removed} } }

# The entry or removed record that has $id.
sub _id_user {
    my ($self, $id) = @_;
    for my $e (@{ $self->{entries} }, @{ $self->{removed} }) {
        return $e if $e->{id} eq $id;
    }
    return;
}

sub entry {
    my ($self, $id) = @_;
    for my $e (@{ $self->{entries} }) {
        return _copy($e) if defined $id && $e->{id} eq $id;
    }
    return;
}

# ---- which dictionary writers use, and from when ---------------------------
#
# An entry is a candidate to be its prefix's writing dictionary when its
# state is current, or when it is staged: retired, with a current_from date
# and no retired date (the form releases that know no staging read as a
# dictionary to load for reading only). A candidate starts at its
# current_from (a current entry without one: always); at any moment the
# prefix's dictionary is the candidate that started last.

sub _epoch_of {
    my ($date) = @_;
    my @t = $date =~ /\A([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})Z\z/ or return;
    require Time::Local;
    return Time::Local::timegm($t[5], $t[4], $t[3], $t[2], $t[1] - 1, $t[0]);
}

sub _is_staged {
    my ($e) = @_;
    return $e->{state} eq 'retired' && defined $e->{current_from} && !defined $e->{retired};
}

sub _is_candidate { $_[0]{state} eq 'current' || _is_staged($_[0]) }

# When candidate $e starts (epoch seconds), or undef for always.
sub _start_of {
    my ($e) = @_;
    return defined $e->{current_from} ? _epoch_of($e->{current_from}) : undef;
}

# The moment the map is asked for: the at option, else now.
sub _at {
    my ($who, %opt) = @_;
    for my $name (sort keys %opt) {
        Carp::croak("$who: unknown option $name (at => EPOCH_SECONDS is the only one)") unless $name eq 'at';
    }
    return _now() unless defined $opt{at};
    Carp::croak("$who: at must be epoch seconds, not " . _shown($opt{at}))
        unless $opt{at} =~ /\A[0-9]+(?:\.[0-9]*)?\z/;
    return $opt{at};
}

# { prefix => the entry writers use at $at }.
sub _current_map {
    my ($self, $at) = @_;
    $at = _now() unless defined $at;
    my (%map, %started);
    for my $e (grep { _is_candidate($_) } @{ $self->{entries} }) {
        my $start = _start_of($e);
        next if defined $start && $start > $at;
        my $p = $e->{prefix};
        next if exists $map{$p} && defined $started{$p} && (!defined $start || $start < $started{$p});
        ($map{$p}, $started{$p}) = ($e, $start);
    }
    return \%map;
}

sub prefixes {
    my ($self, %opt) = @_;
    return sort keys %{ $self->_current_map(_at('prefixes', %opt)) };
}

sub current {
    my ($self, $prefix, %opt) = @_;
    my $at = _at('current', %opt);
    my $e = defined $prefix ? $self->_current_map($at)->{$prefix} : undef;
    return $e ? _copy($e) : undef;
}

# The current dictionary whose prefix is the longest that $key starts with;
# the whole-cache entry (prefix '') only when it is for other keys too.
sub for_key {
    my ($self, $key, %opt) = @_;
    Carp::croak('for_key: a key is needed') unless defined $key;
    my $map = $self->_current_map(_at('for_key', %opt));
    my $best;
    for my $e (values %$map) {
        next if !length $e->{prefix} && !_for_other_keys($e);
        next unless substr($key, 0, length $e->{prefix}) eq $e->{prefix};
        $best = $e if !$best || length $e->{prefix} > length $best->{prefix};
    }
    return $best ? _copy($best) : undef;
}

# The whole-cache entry: the current dictionary of the empty prefix, for
# writers that cannot see keys.
sub whole_cache {
    my ($self, %opt) = @_;
    return $self->current('', at => _at('whole_cache', %opt));
}

# Whether keys of prefixes without a dictionary get the whole-cache entry
# (other_keys=0 says the fallback stores them in less memory).
sub _for_other_keys {
    my ($e) = @_;
    return !(defined $e->{other_keys} && $e->{other_keys} eq '0');
}

sub other_keys_entry {
    my ($self, %opt) = @_;
    my $e = $self->_current_map(_at('other_keys_entry', %opt))->{''};
    return $e && _for_other_keys($e) ? _copy($e) : undef;
}

# The first moment after $at at which a staged entry starts (epoch
# seconds), or undef: until then, what writers use does not change.
sub next_change {
    my ($self, %opt) = @_;
    my $at = _at('next_change', %opt);
    my $next;
    for my $e (grep { _is_candidate($_) } @{ $self->{entries} }) {
        my $start = _start_of($e);
        $next = $start if defined $start && $start > $at && (!defined $next || $start < $next);
    }
    return $next;
}

# Each entry's state at $at, and since when: current (the one writers of
# its prefix use), staged (they will from its current_from), retired.
sub schedule {
    my ($self, %opt) = @_;
    my $at = _at('schedule', %opt);
    my $map = $self->_current_map($at);
    my %in_use = map { ($_ + 0 => 1) } values %$map;
    my @rows;
    for my $e (@{ $self->{entries} }) {
        my $start = _is_candidate($e) ? _start_of($e) : undef;
        my %row = (entry => _copy($e));
        if ($in_use{ $e + 0 }) {
            @row{qw(state since)} = ('current', defined $start ? $e->{current_from} : $e->{trained});
        }
        elsif (_is_candidate($e) && defined $start && $start > $at) {
            @row{qw(state since)} = ('staged', $e->{current_from});
        }
        else {
            # Retired, or a candidate that a later one took over from.
            my $taken_by = $map->{ $e->{prefix} };
            my $since = $e->{retired};
            $since = $taken_by->{current_from} if !defined $since && $taken_by && defined $taken_by->{current_from};
            @row{qw(state since)} = ('retired', $since);
        }
        push @rows, \%row;
    }
    push @rows, map { +{ entry => _copy($_), state => 'removed', since => $_->{removed} } } @{ $self->{removed} };
    return @rows;
}

# The delimiter the set's prefixes end with, as the trainer recorded it on
# the set line, or undef.
sub delimiter {
    my ($self) = @_;
    my $d = $self->{set_fields} && $self->{set_fields}{delimiter};
    return defined $d && length $d ? $d : undef;
}

sub set_delimiter {
    my ($self, $d) = @_;
    Carp::croak('set_delimiter: the delimiter is one or more bytes') unless defined $d && length $d;
    $self->{set_fields}{delimiter} = $d;
    return $d;
}

# What a writer for keys that start with $prefix writes with, as
# compress_methods(prefix => ...) decides: { entry => the current entry or
# undef (the fallback), how => 'prefix' (an entry's prefix starts $prefix,
# or '' for the whole cache), 'delimiter' (the prefix with the set's
# delimiter added is an entry's) or 'none' (no entry matches: the
# whole-cache entry when it is for other keys, or when $prefix begins
# several entries' prefixes; else the fallback) }.
sub resolve_prefix {
    my ($self, $prefix, %opt) = @_;
    Carp::croak('resolve_prefix: a prefix is needed') unless defined $prefix;
    my $map = $self->_current_map(_at('resolve_prefix', %opt));
    my $whole = $map->{''};
    if (!length $prefix) {
        return { entry => $whole ? _copy($whole) : undef, how => $whole ? 'prefix' : 'none' };
    }
    my $best;
    for my $p (grep { length } keys %$map) {
        next unless substr($prefix, 0, length $p) eq $p;
        $best = $p if !defined $best || length $p > length $best;
    }
    return { entry => _copy($map->{$best}), how => 'prefix' } if defined $best;
    my @delimiters = defined $self->delimiter ? ($self->delimiter)
                   : do { my %d = map { (substr($_, -1) => 1) } grep { length && /[^A-Za-z0-9]\z/ } keys %$map;
                          sort keys %d };
    my @with = grep { $map->{$_} } map { $prefix . $_ } @delimiters;
    return { entry => _copy($map->{ $with[0] }), how => 'delimiter' } if @with == 1;
    my $spans = grep { length $_ > length $prefix && substr($_, 0, length $prefix) eq $prefix } keys %$map;
    my $e = $whole && ($spans || _for_other_keys($whole)) ? $whole : undef;
    return { entry => $e ? _copy($e) : undef, how => 'none' };
}

my %DEFAULT_FALLBACK = (method => 'gzip', level => 9);

sub fallback {
    my ($self) = @_;
    return _copy($self->{fallback} || \%DEFAULT_FALLBACK);
}

sub path_of {
    my ($self, $id) = @_;
    my $e = $self->entry($id) or Carp::croak("no dictionary with ID " . _shown($id) . " in the set in $self->{dir}");
    return File::Spec->catfile($self->{dir}, $e->{file});
}

# The bytes of dictionary $id, checked against the manifest: croaks when
# the file is missing, truncated, replaced, or another set's.
sub dictionary_bytes {
    my ($self, $id) = @_;
    my $e = $self->entry($id) or Carp::croak("no dictionary with ID " . _shown($id) . " in the set in $self->{dir}");
    return $self->{pending}{ $e->{id} } if $self->{pending} && exists $self->{pending}{ $e->{id} };
    my $path = File::Spec->catfile($self->{dir}, $e->{file});
    my $bytes = _slurp($path);
    Carp::croak("$path: cannot read dictionary $e->{id} (prefix " . _shown($e->{prefix}) . "): $!")
        unless defined $bytes;
    my $why = _mismatch($e, $bytes);
    Carp::croak("$path: $why: not the file of dictionary $e->{id} (prefix " . _shown($e->{prefix})
              . ") that the manifest lists (truncated, replaced, or of another set)") if $why;
    return $bytes;
}

sub _mismatch {
    my ($e, $bytes) = @_;
    return sprintf('%d bytes, the manifest says %d', length $bytes, $e->{size}) if length $bytes != $e->{size};
    return 'its SHA-256 differs from the manifest\'s' if Digest::SHA::sha256_hex($bytes) ne $e->{sha256};
    my $id = _header_id($bytes);
    return 'not a zstd dictionary' unless defined $id;
    return "its header names dictionary ID $id" if $id != $e->{id};
    return;
}

# The ID in a standard zstd dictionary's header, or undef.
sub _header_id {
    my ($bytes) = @_;
    return unless length $bytes > $DICT_HEADER && substr($bytes, 0, 4) eq $DICT_MAGIC;
    my $id = unpack 'V', substr $bytes, 4, 4;
    return $id ? $id : undef;
}

sub verify {
    my ($self) = @_;
    $self->dictionary_bytes($_->{id}) for @{ $self->{entries} };
    return 1;
}

# ---- changing --------------------------------------------------------------

sub create {
    my ($class, $dir) = @_;
    Carp::croak("$class->create: the folder of a dictionary set is needed") unless defined $dir && length $dir;
    my $path = _manifest_path($dir);
    Carp::croak("$dir holds a dictionary set already ($path): read it instead") if -e $path;
    return bless {
        dir => $dir, identity => _new_identity(), format => $FORMAT, entries => [], removed => [], fallback => undef,
        set_fields => { created => _date('created', _now()) }, manifest_sha256 => undef,
    }, $class;
}

sub _new_identity {
    my $random = _random_bytes($IDENTITY_BYTES);
    $random .= join ',', _now(), $$, rand, {}, $0 if length $random < $IDENTITY_BYTES;
    return substr Digest::SHA::sha256_hex($random), 0, 2 * $IDENTITY_BYTES;
}

my @ADD_OPTIONS = qw(prefix dictionary level id savings samples trained current_from);

sub add {
    my ($self, %opt) = @_;
    my %known = map { ($_ => 1) } @ADD_OPTIONS;
    my %extra = map { ($_ => $opt{$_}) } grep { !$known{$_} } keys %opt;
    for my $name (sort keys %extra) {
        Carp::croak("add: unknown option $name (extra fields are lower-case words: [a-z][a-z0-9_]*)")
            unless $name =~ /\A[a-z][a-z0-9_]*\z/ && !grep { $_ eq $name } @DICTIONARY_FIELDS;
        Carp::croak("add: $name must be defined") unless defined $extra{$name};
    }
    my $prefix = $opt{prefix};
    Carp::croak('add: prefix is needed (the empty string matches every key)') unless defined $prefix;
    Carp::croak('add: prefix must be bytes, not a wide-character string')
        if utf8::is_utf8($prefix) && !utf8::downgrade($prefix, 1);
    Carp::croak('add: level is needed: the zstd level writers use with this dictionary')
        unless defined $opt{level};
    Carp::croak("add: level must be a zstd level ($MIN_LEVEL to $MAX_LEVEL), not " . _shown($opt{level}))
        unless _is_level($opt{level});
    my $bytes = $opt{dictionary};
    Carp::croak('add: dictionary (the bytes of a zstd dictionary) is needed') unless defined $bytes;
    Carp::croak('add: dictionary must be bytes, not a wide-character string')
        if utf8::is_utf8($bytes) && !utf8::downgrade($bytes, 1);
    my $id = _header_id($bytes);
    Carp::croak('add: dictionary is not a standard zstd dictionary (no magic number 37 A4 30 EC, or ID 0)')
        unless defined $id;
    if (defined $opt{id} && $opt{id} ne $id) {
        Carp::croak("add: id must be 1 to $MAX_ID, not " . _shown($opt{id})) unless _is_id($opt{id});
        $bytes = _with_id($bytes, $opt{id});
        $id = $opt{id};
    }
    if (my $same = $self->_id_user($id)) {
        Carp::croak("add: dictionary ID $id is in the set already (prefix " . _shown($same->{prefix})
                  . ', ' . ($same->{state} || 'removed: values may still name it')
                  . '): two dictionaries with one ID are refused; give another id');
    }
    my $loaded = _loaded_state($id, $bytes);
    Carp::croak("add: a different dictionary with ID $id is loaded in this process: "
              . 'two dictionaries with one ID are refused; give another id') if $loaded eq 'different';
    _check_engine($bytes);
    for my $name (qw(savings samples)) {
        next unless defined $opt{$name};
        my $ok = $name eq 'savings' ? _is_percent($opt{$name}) : _is_count($opt{$name});
        Carp::croak("add: $name must be " . ($name eq 'savings' ? 'a percentage' : 'a count') . ', not '
                  . _shown($opt{$name})) unless $ok;
    }
    my %e = (
        %extra,
        id => $id, prefix => $prefix, state => 'current', file => $self->_file_name($prefix, $id),
        level => 0 + $opt{level}, size => length $bytes, sha256 => Digest::SHA::sha256_hex($bytes),
        trained => _date('add: trained', defined $opt{trained} ? $opt{trained} : _now()),
    );
    $e{savings} = $opt{savings} if defined $opt{savings};
    $e{samples} = $opt{samples} if defined $opt{samples};
    my $now = _now();
    my $from = defined $opt{current_from} ? _date('add: current_from', $opt{current_from}) : undef;
    if (defined $from && _epoch_of($from) > $now) {
        # Staged: loaded by every reader from now on, written with from then.
        @e{qw(state current_from)} = ('retired', $from);
    }
    else {
        # At once: the newest decision for the prefix. What was staged for
        # it is cancelled (retired with its current_from: never written
        # with), so that it does not take over later.
        $self->settle(at => $now);
        if (my $old = $self->_current_map($now)->{$prefix}) {
            $old->{state} = 'retired';
            $old->{retired} = _date('retired', $now);
            delete $old->{current_from};
        }
        $_->{retired} = _date('retired', $now)
            for grep { $_->{prefix} eq $prefix && _is_staged($_) } @{ $self->{entries} };
        $e{current_from} = $from if defined $from;
    }
    push @{ $self->{entries} }, \%e;
    $self->{pending}{$id} = $bytes;
    return _copy(\%e);
}

# A file name for prefix's dictionary $id: the prefix's safe characters and
# the ID, which is unique in the set.
sub _file_name {
    my ($self, $prefix, $id) = @_;
    (my $stem = $prefix) =~ s/[^A-Za-z0-9_-]+/_/g;
    $stem =~ s/\A_+|_+\z//g;
    $stem = substr $stem, 0, $MAX_FILE_STEM;
    my %taken = map { ($_->{file} => 1) } @{ $self->{entries} };
    my $name = (length $stem ? "$stem-" : '') . "$id.dict";
    for (my $n = 2; $taken{$name}; $n++) {    # a name given by hand to another ID
        $name = (length $stem ? "$stem-" : '') . "$id-$n.dict";
    }
    return $name;
}

sub unused_id {
    my ($self, %opt) = @_;
    my $from = defined $opt{from} ? $opt{from} : 1;
    Carp::croak("unused_id: from must be 1 to $MAX_ID") unless _is_id($from);
    my %taken = map { ($_->{id} => 1) } @{ $self->{entries} }, @{ $self->{removed} };
    for (my $id = $from; $id <= $MAX_ID; $id++) {
        return $id unless $taken{$id} || _loaded_state($id, '') ne 'not_loaded';
    }
    Carp::croak('unused_id: every dictionary ID is taken');
}

# A random ID that no dictionary of the set has or had, that this process
# has not loaded, and that is not among @{ $opt{avoid} } (the IDs that
# stored values name): two sets made apart then share an ID only by chance.
sub new_id {
    my ($self, %opt) = @_;
    for my $name (sort keys %opt) {
        Carp::croak("new_id: unknown option $name (avoid => [IDs] is the only one)") unless $name eq 'avoid';
    }
    Carp::croak('new_id: avoid must be an array reference of IDs')
        if defined $opt{avoid} && ref $opt{avoid} ne 'ARRAY';
    my %taken = map { ($_->{id} => 1) } @{ $self->{entries} }, @{ $self->{removed} };
    $taken{$_} = 1 for grep { defined } @{ $opt{avoid} || [] };
    my $span = $MAX_ID - $FIRST_RANDOM_ID + 1;
    for (1 .. $ID_DRAWS) {
        my $id = $FIRST_RANDOM_ID + _random_u32() % $span;
        return $id unless $taken{$id} || _loaded_state($id, '') ne 'not_loaded';
    }
    Carp::croak("new_id: no free ID found in $ID_DRAWS random draws");
}

# 32 random bits from the system's generator (perl's rand where there is none).
sub _random_u32 {
    my $bytes = _random_bytes($RANDOM_ID_BYTES);
    return unpack 'N', $bytes if length $bytes == $RANDOM_ID_BYTES;
    return int rand 2**32;
}

# $count bytes from the system's generator, or fewer (none without one):
# each caller says what makes up for them.
sub _random_bytes {
    my ($count) = @_;
    my $bytes = '';
    if (open my $fh, '<', '/dev/urandom') {
        binmode $fh;
        CORE::read($fh, $bytes, $count);
        close $fh;
    }
    return $bytes;
}

# Retires dictionary $id, recording when: now, or the time given; a
# dictionary retired before keeps its date unless one is given (or it had
# none).
sub retire {
    my ($self, $id, %opt) = @_;
    for my $name (sort keys %opt) {
        Carp::croak("retire: unknown option $name (retired => WHEN is the only one)") unless $name eq 'retired';
    }
    my ($e) = grep { $_->{id} eq $id } @{ $self->{entries} };
    Carp::croak("retire: no dictionary with ID " . _shown($id) . " in the set") unless $e;
    my $when = defined $opt{retired} ? _date('retire: retired', $opt{retired})
             : $e->{state} eq 'retired' && defined $e->{retired} ? $e->{retired}
             : _date('retired', _now());
    # A staged one keeps its current_from: retired with it, it was never
    # written with (cancelled), which a rollback tells apart.
    delete $e->{current_from} unless _is_staged($e);
    $e->{state} = 'retired';
    $e->{retired} = $when;
    return _copy($e);
}

# Makes dictionary $id its prefix's current one again (a rollback), or at
# once the one a staged entry would have become: from current_from on
# (epoch seconds or a date; now by default), staged as add stages. Every
# other staged dictionary of the prefix is retired: from then on, $id.
sub make_current {
    my ($self, $id, %opt) = @_;
    for my $name (sort keys %opt) {
        Carp::croak("make_current: unknown option $name (current_from => WHEN is the only one)")
            unless $name eq 'current_from';
    }
    my ($e) = grep { $_->{id} eq $id } @{ $self->{entries} };
    unless ($e) {
        my ($gone) = grep { $_->{id} eq $id } @{ $self->{removed} };
        Carp::croak("make_current: dictionary $id was removed from the set (its file is gone): train another")
            if $gone;
        Carp::croak('make_current: no dictionary with ID ' . _shown($id) . ' in the set');
    }
    my $now = _now();
    my $from = defined $opt{current_from} ? _date('make_current: current_from', $opt{current_from})
                                          : _date('now', $now);
    $self->settle(at => $now);
    my $current = $self->_current_map($now)->{ $e->{prefix} };
    my @cancel = grep { $_ != $e && $_->{prefix} eq $e->{prefix} && _is_staged($_) } @{ $self->{entries} };
    if ($current && $current == $e) {
        Carp::croak("make_current: dictionary $id is the current one of prefix " . _shown($e->{prefix})
                  . ' already, and nothing is staged to replace it') unless @cancel;
    }
    elsif (_epoch_of($from) > $now) {
        @$e{qw(state current_from)} = ('retired', $from);
        delete $e->{retired};
    }
    else {
        if ($current) {
            $current->{state} = 'retired';
            $current->{retired} = _date('retired', $now);
            delete $current->{current_from};
        }
        @$e{qw(state current_from)} = ('current', $from);
        delete $e->{retired};
    }
    $_->{retired} = _date('retired', $now) for @cancel;    # cancelled: see retire
    return _copy($e);
}

# Writes down what the schedule says at $at (now by default): each staged
# dictionary whose time has come is made current, and the one it took over
# from retired at that time. What writers use does not change; releases
# that know no staging then read the same. write does this.
sub settle {
    my ($self, %opt) = @_;
    my $at = _at('settle', %opt);
    my $map = $self->_current_map($at);
    for my $e (grep { _is_candidate($_) } @{ $self->{entries} }) {
        my $start = _start_of($e);
        next if defined $start && $start > $at;
        my $in_use = $map->{ $e->{prefix} };
        if ($in_use == $e) {
            $e->{state} = 'current';
            next;
        }
        $e->{state} = 'retired';
        $e->{retired} = defined $in_use->{current_from} ? $in_use->{current_from} : _date('retired', $at);
        delete $e->{current_from};
    }
    return $self;
}

sub remove {
    my ($self, $id) = @_;
    my ($e) = grep { $_->{id} eq $id } @{ $self->{entries} };
    Carp::croak("remove: no dictionary with ID " . _shown($id) . " in the set") unless $e;
    Carp::croak("remove: dictionary $id is current for prefix " . _shown($e->{prefix}) . ': retire it first')
        if $e->{state} eq 'current';
    $self->{entries} = [ grep { $_ != $e } @{ $self->{entries} } ];
    delete $self->{pending}{$id} if $self->{pending};
    push @{ $self->{removed_files} }, $e->{file};
    push @{ $self->{removed} }, { id => $e->{id}, prefix => $e->{prefix}, removed => _date('removed', _now()) };
    return _copy($e);
}

sub set_fallback {
    my ($self, %opt) = @_;
    my %f = %opt;
    $f{measured} = _date('set_fallback: measured', $f{measured}) if defined $f{measured};
    for my $name (keys %f) {
        Carp::croak("set_fallback: $name must be defined") unless defined $f{$name};
        Carp::croak("set_fallback: unknown option $name") unless $name =~ /\A[a-z][a-z0-9_]*\z/;
    }
    for my $need (@{ $REQUIRED{fallback} }) {
        Carp::croak("set_fallback: $need is needed") unless defined $f{$need};
    }
    eval { _check_fallback(\%f, 'set_fallback'); 1 } or do { (my $e = $@) =~ s/\n\z//; Carp::croak($e) };
    $f{level} += 0;
    $self->{fallback} = \%f;
    return _copy(\%f);
}

# ---- writing ---------------------------------------------------------------

sub as_string {
    my ($self) = @_;
    my @out = ("$MAGIC_WORD $self->{format}",
               '# A zstd dictionary set: Cache::Memcached::RustXS::Zstd::DictionarySet describes this file.',
               _line('set', { %{ $self->{set_fields} || {} }, id => $self->{identity} }, \@SET_FIELDS));
    push @out, _line('fallback', $self->{fallback}, \@FALLBACK_FIELDS) if $self->{fallback};
    push @out, _line('dictionary', $_, \@DICTIONARY_FIELDS) for @{ $self->{entries} };
    push @out, _line('removed', $_, \@REMOVED_FIELDS) for @{ $self->{removed} };
    push @out, 'end dictionaries=' . scalar(@{ $self->{entries} })
             . (@{ $self->{removed} } ? ' removed=' . scalar @{ $self->{removed} } : '');
    return join "\n", @out, '';
}

sub _line {
    my ($kind, $f, $order) = @_;
    my %known = map { ($_ => 1) } @$order;
    my @names = ((grep { defined $f->{$_} } @$order), sort grep { !$known{$_} && defined $f->{$_} } keys %$f);
    return join ' ', $kind, map { "$_=" . _encode_value($f->{$_}) } @names;
}

sub write {
    my ($self) = @_;
    my $dir = $self->{dir};
    unless (-d $dir) {
        mkdir $dir or Carp::croak("write: cannot make the folder $dir: $!");
    }
    my $lock_path = File::Spec->catfile($dir, $LOCK_NAME);
    open my $lock, '>>', $lock_path or Carp::croak("write: cannot open $lock_path: $!");
    flock $lock, LOCK_EX or Carp::croak("write: cannot lock $lock_path: $!");
    my $path = _manifest_path($dir);
    my $on_disk = _slurp($path);
    my $disk_sha = defined $on_disk ? Digest::SHA::sha256_hex($on_disk) : undef;
    if (defined $disk_sha ? !defined $self->{manifest_sha256} || $disk_sha ne $self->{manifest_sha256}
                          : defined $self->{manifest_sha256}) {
        Carp::croak("write: $path changed since this set was read (another writer?): read it again");
    }
    # Dictionary files first, so that every file a manifest names exists
    # when that manifest appears.
    my %pending = %{ $self->{pending} || {} };
    for my $e (@{ $self->{entries} }) {
        next unless exists $pending{ $e->{id} };
        my $file = File::Spec->catfile($dir, $e->{file});
        my $existing = _slurp($file);
        next if defined $existing && !_mismatch($e, $existing);
        _atomic_write($file, $pending{ $e->{id} });
    }
    $self->settle;
    my $text = $self->as_string;
    _atomic_write($path, $text);
    $self->{manifest_sha256} = Digest::SHA::sha256_hex($text);
    delete $self->{pending};
    # Then the files no manifest names any more.
    my %kept = map { ($_->{file} => 1) } @{ $self->{entries} };
    for my $file (grep { !$kept{$_} } @{ delete $self->{removed_files} || [] }) {
        my $p = File::Spec->catfile($dir, $file);
        unlink $p or $!{ENOENT} or Carp::croak("write: cannot remove $p: $!");
    }
    close $lock;
    return $self;
}

# Writes $bytes to $path through a new file in the same folder and a rename.
sub _atomic_write {
    my ($path, $bytes) = @_;
    my $tmp;
    my $fh;
    for my $try (1 .. 100) {
        $tmp = sprintf '%s.tmp-%d-%d', $path, $$, int rand 1e9;
        last if sysopen $fh, $tmp, O_WRONLY | O_CREAT | O_EXCL, 0644;
        Carp::croak("write: cannot create $tmp: $!") unless $!{EEXIST};
        undef $fh;
    }
    Carp::croak("write: cannot create a temporary file beside $path") unless $fh;
    binmode $fh;
    my $ok = (print {$fh} $bytes) && $fh->flush && $fh->sync;
    my $err = $!;
    $ok = close($fh) && $ok;
    $err = $! unless $ok || $err;
    if (!$ok || !rename $tmp, $path) {
        $err = $! if $ok;
        unlink $tmp;
        Carp::croak("write: cannot write $path: $err");
    }
    return;
}

# ---- the clock, and what the engine provided ---------------------------------

our $Clock;

sub _now { $Clock ? $Clock->() : time }

# A dictionary given another ID: its header's ID field (bytes 4 to 7, little-
# endian) rewritten, as the engine did.
sub _with_id {
    my ($bytes, $id) = @_;
    _check_engine($bytes);
    substr($bytes, 4, 4, pack 'V', $id);
    return $bytes;
}

# Whether a dictionary with $id is loaded in this process: this fixture
# loads none (readers of the set are the current distribution's).
sub _loaded_state { return 'not_loaded' }

sub _check_engine {
    my ($bytes) = @_;
    Carp::croak('add: not a zstd dictionary (no magic number 37 A4 30 EC, or ID 0)')
        unless length $bytes > $DICT_HEADER && substr($bytes, 0, 4) eq $DICT_MAGIC
               && unpack('V', substr $bytes, 4, 4) != 0;
    return;
}

1;
__END__
