package Cache::Memcached::RustXS::Zstd::DictionarySet::Manifest;

# The manifest of a dictionary set as bytes: its format (parse, check,
# lines to append), its dates, and the atomic write of its files. No state over
# time and no IDs: DictionarySet::State and DictionarySet::IDs hold those.

use strict;
use warnings;

use Carp ();
use Digest::SHA ();
use Exporter 5.57 'import';
use Fcntl qw(O_WRONLY O_CREAT O_EXCL);
use File::Spec ();
use IO::Handle ();
use POSIX ();
use Time::Local ();
use version ();
use Cache::Memcached::RustXS ();

our $VERSION = '1.000';

our @EXPORT_OK = qw(
    $FORMAT $MANIFEST_NAME $MAX_ID $MIN_LEVEL $MAX_LEVEL
    manifest_date epoch_of is_date is_count is_percent is_id is_level quoted_value
    parse_manifest manifest_header record_line check_fallback_fields slurp atomic_write manifest_path
    file_mismatch header_id
);

our $FORMAT        = 2;                       # the format version this module reads and writes
our $MANIFEST_NAME = 'manifest';
my $MAGIC_WORD     = 'cmrx-dictionary-set';
my $DICT_MAGIC     = "\x37\xa4\x30\xec";      # zstd dictionary magic, little-endian
my $DICT_HEADER    = 8;                       # magic and ID
our $MAX_ID        = 4294967295;              # IDs are 32-bit, 0 means none
my %LEVELS         = Cache::Memcached::RustXS::_level_ranges();    # the engine's (cmrx.h)
our $MIN_LEVEL     = $LEVELS{zstd_min};
our $MAX_LEVEL     = $LEVELS{zstd_max};
my %FALLBACK_METHODS = (zstd => 1, gzip => 1);
my %GZIP_LEVELS  = map { ($_ => 1) } $LEVELS{gzip_min} .. $LEVELS{gzip_max};    # libdeflate's
my %KINDS        = (train => 1, rollback => 1, cancel => 1, retire => 1);

# Fields of each kind of line, in the order they are written; any other
# field (a lower-case name) is kept as it is and written after these.
our %FIELDS = (
    set        => [qw(id created delimiter)],
    fallback   => [qw(method level savings samples measured)],
    dictionary => [qw(id prefix file level size sha256 savings samples trained)],
    decision   => [qw(seq kind prefix dictionary made effective)],
    removed    => [qw(id prefix removed)],
);
our %REQUIRED = (
    set        => [qw(id)],
    fallback   => [qw(method level)],
    dictionary => [qw(id prefix file level size sha256)],
    decision   => [qw(seq kind prefix made effective)],
    removed    => [qw(id removed)],
);
my %LINE;    # how each kind of line is read and checked: below parse_manifest
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
sub is_count   { defined $_[0] && $_[0] =~ /\A(?:0|[1-9][0-9]{0,15})\z/ }
sub is_percent { defined $_[0] && $_[0] =~ /\A-?[0-9]{1,3}(?:\.[0-9]{1,6})?\z/ }
sub is_date    { defined $_[0] && $_[0] =~ /\A[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z\z/ }
sub is_id      { is_count($_[0]) && $_[0] >= 1 && $_[0] <= $MAX_ID }
sub is_level   { _is_int($_[0]) && $_[0] >= $MIN_LEVEL && $_[0] <= $MAX_LEVEL }
sub _is_file    { defined $_[0] && $_[0] =~ /\A[A-Za-z0-9_][A-Za-z0-9_.-]{0,200}\z/ }

# ---- dates -------------------------------------------------------------------

# A date as the manifest writes it: ISO 8601 in UTC, to the second. Takes
# epoch seconds (a fraction is dropped) or such a string; undef gives undef.
# With $what, anything else croaks naming it; without, it gives undef.
sub manifest_date {
    my ($v, $what) = @_;
    return undef unless defined $v;
    return $v if is_date($v);
    unless ($v =~ /\A[0-9]+(?:\.[0-9]*)?\z/) {
        return undef unless defined $what;
        Carp::croak("$what must be epoch seconds or YYYY-MM-DDTHH:MM:SSZ, not " . quoted_value($v));
    }
    return POSIX::strftime('%Y-%m-%dT%H:%M:%SZ', gmtime int $v);
}

# Epoch seconds of a manifest date, or undef. The state of a set is asked
# for often and its dates are few: they are remembered (a bounded number).
my %EPOCH_OF;
my $EPOCHS_KEPT = 4096;

sub epoch_of {
    my ($date) = @_;
    return undef unless defined $date;
    return $EPOCH_OF{$date} if exists $EPOCH_OF{$date};
    %EPOCH_OF = () if keys %EPOCH_OF >= $EPOCHS_KEPT;
    return $EPOCH_OF{$date} = _epoch_of($date);
}

sub _epoch_of {
    my ($date) = @_;
    my @t = defined $date ? $date =~ /\A([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})Z\z/ : ();
    return undef unless @t;
    my $epoch = eval { Time::Local::timegm($t[5], $t[4], $t[3], $t[2], $t[1] - 1, $t[0]) };
    return $epoch;
}

# A value as messages quote it: in quotes, its odd bytes as %XX.
sub quoted_value { defined $_[0] ? "'" . _encode_value($_[0]) . "'" : 'undef' }

# ---- reading -------------------------------------------------------------------

sub manifest_path { File::Spec->catfile($_[0], $MANIFEST_NAME) }

sub slurp {
    my ($path) = @_;
    open my $fh, '<', $path or return;
    binmode $fh;
    my $bytes = do { local $/; <$fh> };
    close $fh;
    return $bytes;
}

# The manifest's bytes, parsed and checked line by line; dies with
# "line N: why" (a log that cannot be true is refused, never repaired).
sub parse_manifest {
    my ($dir, $bytes) = @_;
    my %self = (dir => $dir, manifest_sha256 => Digest::SHA::sha256_hex($bytes), text => $bytes,
                entries => [], removed => [], fallback => undef, decisions => [], newest => undef);
    my %seen = (by_id => {}, by_file => {}, removed => {});
    die "line 1: empty: not a dictionary set manifest (or truncated to nothing)\n" unless length $bytes;
    my @lines = split /\n/, $bytes, -1;
    die 'line ' . scalar(@lines) . ": truncated: the last line has no newline\n" if length $lines[-1];
    pop @lines;
    my ($n, $format) = (0, undef);
    for my $line (@lines) {
        $n++;
        next if $line =~ /\A(?:#.*)?\z/;
        my $at = "line $n";
        if (!defined $format) {
            $format = _format_of($line, $at);
            next;
        }
        my ($kind, $f) = _fields_of($line, $at);
        my $take = $LINE{$kind} or next;    # a kind a later release added: skipped
        die "$at: $kind line before the set line\n" if $kind ne 'set' && !$self{identity};
        $take->(\%self, $f, $at, \%seen, $n);
    }
    die "not a dictionary set manifest (no '$MAGIC_WORD' line)\n" unless defined $format;
    die "no set line\n" unless $self{identity};
    $self{format} = $format;
    $self{entries} = [ grep { !$seen{removed}{ $_->{id} } } @{ $self{entries} } ];
    return \%self;
}

# Whether a manifest's release= names a release newer than this one.
sub _is_newer_release {
    my ($release) = @_;
    return defined $release && eval { version->parse($release) > version->parse($Cache::Memcached::RustXS::VERSION) };
}

# The format version of the first line.
sub _format_of {
    my ($line, $at) = @_;
    die "$at: not a dictionary set manifest (it must start with '$MAGIC_WORD $FORMAT')\n"
        unless $line =~ /\A\Q$MAGIC_WORD\E ([0-9]+)((?: \S+)*)\z/;
    my ($format, $rest) = ($1, $2);
    if ($format > $FORMAT) {
        my ($release) = $rest =~ / release=([0-9][0-9._]*)/;
        die "$at: format $format needs Cache::Memcached::RustXS "
          . (_is_newer_release($release) ? "$release or later" : 'newer than ' . $Cache::Memcached::RustXS::VERSION)
          . " (this is $Cache::Memcached::RustXS::VERSION, which reads format $FORMAT): upgrade it\n";
    }
    die "$at: format $format was written by a development version that was never released; this release "
      . "reads format $FORMAT only: make a new set in an empty folder (cmrx-dict train --all --out-dir NEWDIR), "
      . "roll it out, then retire the old folder; this one is left as it is\n" if $format < $FORMAT;
    return $format;
}

# A line's kind and fields, with the ones its kind needs.
sub _fields_of {
    my ($line, $at) = @_;
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
    return ($kind, \%f);
}

# A line's time must not be earlier than the newest before it: time only
# moves forward in the log.
sub _in_time_order {
    my ($self, $date, $at, $n, $what) = @_;
    my $t = epoch_of($date);
    my $newest = $self->{newest};
    die "$at: time order: $what $date is earlier than line $newest->{line}'s $newest->{date}: "
      . "the log's times only move forward\n" if $newest && $t < $newest->{time};
    $self->{newest} = { time => $t, date => $date, line => $n };
    return $t;
}

sub _date_field {
    my ($f, $name, $at) = @_;
    die "$at: $name must be YYYY-MM-DDTHH:MM:SSZ, not " . quoted_value($f->{$name}) . "\n"
        unless is_date($f->{$name}) && defined epoch_of($f->{$name});
    return;
}

# Each kind of line taken into the set being parsed, after its checks.
%LINE = (
    set => sub {
        my ($self, $f, $at) = @_;
        die "$at: a second set line\n" if $self->{identity};
        die "$at: set id must be 32 hexadecimal digits, not " . quoted_value($f->{id}) . "\n"
            unless $f->{id} =~ /\A[0-9a-f]{32}\z/;
        _date_field($f, 'created', $at) if defined $f->{created};
        @$self{qw(identity set_fields)} = ($f->{id}, $f);
    },
    fallback => sub {
        my ($self, $f, $at) = @_;
        check_fallback_fields($f, $at);
        _numbers($f);
        $self->{fallback} = $f;    # a re-measured fallback replaces the one before
    },
    dictionary => sub {
        my ($self, $f, $at, $seen, $n) = @_;
        _check_entry($f, $at);
        if (my $other = $seen->{by_id}{ $f->{id} }) {
            die "$at: dictionary ID $f->{id} is listed twice (also line $other->{line}, prefix "
              . quoted_value($other->{prefix}) . "): two dictionaries with one ID are refused\n";
        }
        die "$at: file $f->{file} is listed twice\n" if $seen->{by_file}{ $f->{file} };
        $seen->{by_id}{ $f->{id} } = $seen->{by_file}{ $f->{file} } = { %$f, line => $n };
        push @{ $self->{entries} }, _numbers($f);
    },
    decision => sub {
        my ($self, $f, $at, $seen, $n) = @_;
        my $last = @{ $self->{decisions} } ? $self->{decisions}[-1] : undef;
        my $want = $last ? $last->{seq} + 1 : 1;
        die "$at: seq " . quoted_value($f->{seq}) . ", where seq $want is next: a seq repeated, "
          . "out of order or missing\n" unless $f->{seq} eq $want;
        die "$at: kind must be train, rollback, cancel or retire, not " . quoted_value($f->{kind}) . "\n"
            unless $KINDS{ $f->{kind} };
        _date_field($f, $_, $at) for qw(made effective);
        die "$at: effective $f->{effective} is before made $f->{made}: a decision takes effect when "
          . "made or later\n" if epoch_of($f->{effective}) < epoch_of($f->{made});
        my $id = $f->{dictionary};
        if ($f->{kind} eq 'cancel') { undef $id }
        else {
            die "$at: a $f->{kind} decision names no dictionary\n" unless defined $id;
            my $e = $seen->{by_id}{$id};
            die "$at: dictionary " . quoted_value($id) . " is on no dictionary line before it\n" unless $e;
            die "$at: dictionary $id was removed at line $seen->{removed}{$id}\n" if $seen->{removed}{$id};
            die "$at: dictionary $id is of the prefix " . quoted_value($e->{prefix}) . ', not '
              . quoted_value($f->{prefix}) . "\n" unless $e->{prefix} eq $f->{prefix};
        }
        my $made = _in_time_order($self, $f->{made}, $at, $n, 'made');
        push @{ $self->{decisions} }, { seq => 0 + $f->{seq}, kind => $f->{kind}, prefix => $f->{prefix},
                                        id => $id, made => $made, effective => epoch_of($f->{effective}),
                                        line => $n };
    },
    removed => sub {
        my ($self, $f, $at, $seen, $n) = @_;
        my $e = $seen->{by_id}{ $f->{id} };
        die "$at: removed dictionary " . quoted_value($f->{id}) . " is on no dictionary line before it\n" unless $e;
        die "$at: dictionary $f->{id} is removed twice (also line $seen->{removed}{ $f->{id} })\n"
            if $seen->{removed}{ $f->{id} };
        _date_field($f, 'removed', $at);
        _in_time_order($self, $f->{removed}, $at, $n, 'removed');
        $seen->{removed}{ $f->{id} } = $n;
        push @{ $self->{removed} }, { id => $f->{id}, prefix => $e->{prefix}, removed => $f->{removed}, line => $n };
    },
);

# The numbers of a line as numbers (JSON output writes them so): its
# numeric fields, and any other that holds a plain number; not the text
# ones (a prefix, a file name, a checksum, a date).
my %TEXT = map { ($_ => 1) } qw(prefix file sha256 method trained measured);

sub _numbers {
    my ($f) = @_;
    $f->{$_} += 0 for grep { !$TEXT{$_} && $f->{$_} =~ /\A-?(?:0|[1-9][0-9]{0,14})(?:\.[0-9]{1,9})?\z/ } keys %$f;
    return $f;
}

sub check_fallback_fields {
    my ($f, $at) = @_;
    die "$at: fallback method must be zstd or gzip, not " . quoted_value($f->{method}) . "\n"
        unless $FALLBACK_METHODS{ $f->{method} };
    if ($f->{method} eq 'zstd') {
        die "$at: fallback level must be a zstd level ($MIN_LEVEL to $MAX_LEVEL), not " . quoted_value($f->{level}) . "\n"
            unless is_level($f->{level});
    }
    else {
        die "$at: fallback level must be a gzip level ($LEVELS{gzip_min} to $LEVELS{gzip_max}), not "
            . quoted_value($f->{level}) . "\n"
            unless _is_int($f->{level}) && $GZIP_LEVELS{ $f->{level} };
    }
    _check_measures($f, $at, 'measured');
    return;
}

sub _check_measures {
    my ($f, $at, $date) = @_;
    die "$at: savings must be a percentage (a decimal number), not " . quoted_value($f->{savings}) . "\n"
        if defined $f->{savings} && !is_percent($f->{savings});
    die "$at: samples must be a count, not " . quoted_value($f->{samples}) . "\n"
        if defined $f->{samples} && !is_count($f->{samples});
    _date_field($f, $date, $at) if defined $f->{$date};
    return;
}

sub _check_entry {
    my ($f, $at) = @_;
    die "$at: dictionary id must be 1 to $MAX_ID, not " . quoted_value($f->{id}) . "\n" unless is_id($f->{id});
    die "$at: file must be a plain name inside the set's folder, not " . quoted_value($f->{file}) . "\n"
        unless _is_file($f->{file}) && $f->{file} ne $MANIFEST_NAME;
    die "$at: level must be a zstd level ($MIN_LEVEL to $MAX_LEVEL), not " . quoted_value($f->{level}) . "\n"
        unless is_level($f->{level});
    die "$at: size must be a number of bytes, not " . quoted_value($f->{size}) . "\n"
        unless is_count($f->{size}) && $f->{size} > $DICT_HEADER;
    die "$at: sha256 must be 64 lower-case hexadecimal digits\n" unless $f->{sha256} =~ /\A[0-9a-f]{64}\z/;
    _check_measures($f, $at, 'trained');
    return;
}


# ---- writing -------------------------------------------------------------------

# The first lines of a new manifest: the format (and the release that
# wrote it, which a reader of an older release names), and a comment.
sub manifest_header {
    return "$MAGIC_WORD $FORMAT release=$Cache::Memcached::RustXS::VERSION\n"
         . "# A zstd dictionary set, one record a line, appended in order: "
         . "Cache::Memcached::RustXS::Zstd::DictionarySet describes this file.\n";
}

# One line of $kind, its fields in the written order, then any others.
sub record_line {
    my ($kind, $f) = @_;
    my $order = $FIELDS{$kind};
    my %known = map { ($_ => 1) } @$order;
    my @names = ((grep { defined $f->{$_} } @$order), sort grep { !$known{$_} && defined $f->{$_} } keys %$f);
    return join(' ', $kind, map { "$_=" . _encode_value($f->{$_}) } @names) . "\n";
}


# Writes $bytes to $path through a new file in the same folder and a rename.
sub atomic_write {
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


# ---- dictionary files ------------------------------------------------------------

# Why $bytes are not the file of entry $e, or undef when they are.
sub file_mismatch {
    my ($e, $bytes) = @_;
    return sprintf('%d bytes, the manifest says %d', length $bytes, $e->{size}) if length $bytes != $e->{size};
    return 'its SHA-256 differs from the manifest\'s' if Digest::SHA::sha256_hex($bytes) ne $e->{sha256};
    my $id = header_id($bytes);
    return 'not a zstd dictionary' unless defined $id;
    return "its header names dictionary ID $id" if $id != $e->{id};
    return;
}

# The ID in a standard zstd dictionary's header, or undef.
sub header_id {
    my ($bytes) = @_;
    return unless length $bytes > $DICT_HEADER && substr($bytes, 0, 4) eq $DICT_MAGIC;
    my $id = unpack 'V', substr $bytes, 4, 4;
    return $id ? $id : undef;
}


1;

__END__

=head1 NAME

Cache::Memcached::RustXS::Zstd::DictionarySet::Manifest - the manifest format of a dictionary set

=head1 SYNOPSIS

  use Cache::Memcached::RustXS::Zstd::DictionarySet::Manifest qw(manifest_date epoch_of);

  my $date = manifest_date(1767225600);    # 2026-01-01T00:00:00Z

=head1 DESCRIPTION

The part of L<Cache::Memcached::RustXS::Zstd::DictionarySet> that reads
and writes its manifest (see
L<Cache::Memcached::RustXS::Zstd::DictionarySet/The manifest>), and the
one home of the manifest's dates, which every C<cmrx-dict> command uses.

=head1 FUNCTIONS

=over 4

=item parse_manifest($dir, $bytes)

The manifest's bytes parsed and checked line by line (a hash
DictionarySet blesses); dies with C<line N: why> (the checks of
L<Cache::Memcached::RustXS::Zstd::DictionarySet/What a reader refuses>
that need no fold).

=item manifest_header(), record_line($kind, \%fields)

The first lines of a new manifest, and one line of a kind, its fields in
the written order.

=item manifest_date($epoch_or_date [, $what]), epoch_of($date)

A date as the manifest writes it (C<YYYY-MM-DDTHH:MM:SSZ>, UTC; undef
for undef; with C<$what>, anything else croaks naming it), and its epoch
seconds (undef when it is none).

=item is_date, is_count, is_percent, is_id, is_level, quoted_value

Checks of a field's value, and a value as messages quote it.

=item check_fallback_fields(\%fields, $where)

Dies saying why a fallback line's fields are wrong.

=item manifest_path($dir), slurp($path), atomic_write($path, $bytes)

The manifest's path, a file's bytes (undef when it cannot be read), and a
write through a new file in the same folder and a rename.

=item file_mismatch($entry, $bytes), header_id($bytes)

Why C<$bytes> are not the file of an entry (undef when they are), and
the ID in a zstd dictionary's header.

=back

=head1 SEE ALSO

L<Cache::Memcached::RustXS::Zstd::DictionarySet>, which reads and
writes its manifest through this module, and its
L<Cache::Memcached::RustXS::Zstd::DictionarySet/The manifest> section.

=head1 AUTHOR

The Cache-Memcached-RustXS developers.

=head1 BUGS AND SUPPORT

Please report bugs at
L<https://github.com/cache-memcached-rustxs/Cache-Memcached-RustXS/issues>.

=head1 COPYRIGHT AND LICENSE

Copyright (C) 2026 the Cache-Memcached-RustXS developers.

This library is free software; you can redistribute it and/or modify it
under the same terms as Perl itself.

=cut
