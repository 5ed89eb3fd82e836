# Release 0.101's reader and writer of dictionary sets as it shipped (the
# module Cache::Memcached::RustXS::Zstd::DictionarySet of commit dac997c),
# kept to prove what 0.101 makes of the sets this release writes, and what
# this release makes of the sets 0.101 changes. Not installed. It calls
# nothing of the current distribution: what 0.101 asked of its engine is
# written out below (marked "frozen"), and time comes from $Clock.
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
# frozen: the level ranges of 0.101's engine (its cmrx.h)
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
my @DICTIONARY_FIELDS = qw(id prefix state file level size sha256 savings samples trained);
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
# frozen: 0.101 read the system's clock; tests set this code reference
# (epoch seconds) to move this copy's time without touching anyone else's.
our $Clock;
sub _now { $Clock ? $Clock->() : time }

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

sub _current_map {
    my ($self) = @_;
    return { map { ($_->{prefix} => $_) } grep { $_->{state} eq 'current' } @{ $self->{entries} } };
}

sub prefixes { sort keys %{ $_[0]->_current_map } }

sub current {
    my ($self, $prefix) = @_;
    my $e = defined $prefix ? $self->_current_map->{$prefix} : undef;
    return $e ? _copy($e) : undef;
}

# The current dictionary whose prefix is the longest that $key starts with.
sub for_key {
    my ($self, $key) = @_;
    Carp::croak('for_key: a key is needed') unless defined $key;
    my $best;
    for my $e (grep { $_->{state} eq 'current' } @{ $self->{entries} }) {
        next unless substr($key, 0, length $e->{prefix}) eq $e->{prefix};
        $best = $e if !$best || length $e->{prefix} > length $best->{prefix};
    }
    return $best ? _copy($best) : undef;
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
    my $random = '';
    if (open my $fh, '<', '/dev/urandom') {
        binmode $fh;
        CORE::read($fh, $random, $IDENTITY_BYTES);
        close $fh;
    }
    $random .= join ',', time, $$, rand, {}, $0 if length $random < $IDENTITY_BYTES;
    return substr Digest::SHA::sha256_hex($random), 0, 2 * $IDENTITY_BYTES;
}

my @ADD_OPTIONS = qw(prefix dictionary level id savings samples trained);

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
    if (my $old = $self->_current_map->{$prefix}) {
        $old->{state} = 'retired';
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

sub retire {
    my ($self, $id) = @_;
    my ($e) = grep { $_->{id} eq $id } @{ $self->{entries} };
    Carp::croak("retire: no dictionary with ID " . _shown($id) . " in the set") unless $e;
    $e->{state} = 'retired';
    return _copy($e);
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

# ---- what the engine provided (frozen) -------------------------------------
#
# 0.101 asked its engine to rewrite a dictionary's ID, whether a dictionary
# with an ID was loaded in the process, and whether the engine accepted a
# dictionary. The copy keeps the manifest's behaviour: the ID is the four
# bytes after the magic number, and no dictionary is loaded by this copy.

sub _with_id {
    my ($bytes, $id) = @_;
    Carp::croak('add: not a standard zstd dictionary') unless defined _header_id($bytes);
    substr($bytes, 4, 4) = pack 'V', $id;
    return $bytes;
}

sub _loaded_state { 'not_loaded' }

sub _check_engine {
    my ($bytes) = @_;
    Carp::croak('add: not a standard zstd dictionary') unless defined _header_id($bytes);
    return;
}

1;
