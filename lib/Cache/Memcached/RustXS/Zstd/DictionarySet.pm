package Cache::Memcached::RustXS::Zstd::DictionarySet;

use strict;
use warnings;

use Carp ();
use Digest::SHA ();
use Fcntl qw(:flock);
use File::Spec ();
use Cache::Memcached::RustXS ();
use Cache::Memcached::RustXS::Zstd::DictionarySet::Manifest qw(
    $FORMAT $MANIFEST_NAME $MAX_ID manifest_date epoch_of is_count is_percent is_id is_level quoted_value
    parse_manifest manifest_header record_line check_fallback_fields slurp atomic_write manifest_path
    file_mismatch header_id);
use Cache::Memcached::RustXS::Zstd::DictionarySet::State qw(now state_at staged_start);
use Cache::Memcached::RustXS::Zstd::DictionarySet::IDs qw(
    new_identity lowest_unused_id random_unused_id loaded_state);

our $VERSION = '1.000';

my $LOCK_NAME      = '.lock';
my $MAX_FILE_STEM  = 40;                      # bytes of the prefix kept in a file name

# ---- reading ---------------------------------------------------------------

sub read {
    my ($class, $dir) = @_;
    Carp::croak("$class->read: the folder of a dictionary set is needed")
        unless defined $dir && length $dir;
    my $path = manifest_path($dir);
    my $bytes = slurp($path);
    Carp::croak("$dir is not a dictionary set: cannot read $path: $!") unless defined $bytes;
    my $self = eval { _check_removals(parse_manifest($dir, $bytes)) };
    unless ($self) {
        (my $why = $@) =~ s/\n\z//;
        Carp::croak("$path: $why: refused, nothing changed");    # the message names the line
    }
    return bless $self, $class;
}

# A removal is of a dictionary that no writer uses and nothing pending
# names at its time (the decisions on the lines before it, folded then).
sub _check_removals {
    my ($self) = @_;
    for my $r (@{ $self->{removed} }) {
        my $at = epoch_of($r->{removed});
        my @before = grep { $_->{line} < $r->{line} } @{ $self->{decisions} };
        my $p = Cache::Memcached::RustXS::Zstd::DictionarySet::State::fold(\@before, $at)->{prefixes}{ $r->{prefix} } || {};
        my $pending = $p->{pending} ? $p->{pending}{id} : undef;
        die "line $r->{line}: dictionary $r->{id} is removed while the writers of its prefix "
          . (defined $p->{writer} && $p->{writer} eq $r->{id} ? 'use it' : 'are to take it up')
          . ": a removal is of a retired dictionary\n"
            if grep { defined && $_ eq $r->{id} } $p->{writer}, $pending;
    }
    return $self;
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

sub removed { map { +{ id => $_->{id}, prefix => $_->{prefix}, removed => $_->{removed} } } @{ $_[0]{removed} } }

# The entry or removed record that has $id.
sub _id_user {
    my ($self, $id) = @_;
    for my $e (@{ $self->{entries} }) { return ($e, 'in the set') if $e->{id} eq $id }
    for my $e (@{ $self->{removed} }) { return ($e, 'removed: values may still name it') if $e->{id} eq $id }
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
# Every answer below comes from State's state_at: the one place that says
# what a set is at a moment.

# The moment asked for: the at option, else now.
sub _at {
    my ($who, %opt) = @_;
    Cache::Memcached::RustXS::_check_options($who, \%opt, 'at');
    return now() unless defined $opt{at};
    Carp::croak("$who: at must be epoch seconds, not " . quoted_value($opt{at}))
        unless $opt{at} =~ /\A[0-9]+(?:\.[0-9]*)?\z/;
    return $opt{at};
}

sub _state { state_at($_[0]{entries}, $_[0]{removed}, defined $_[1] ? $_[1] : now(), $_[0]{decisions}) }

# { prefix => the entry writers use at $at }.
sub _current_map { $_[0]->_state($_[1])->{writers} }

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

# The entries a reader holding the set loads (every one: current, staged
# and retired), as the state says.
sub for_readers {
    my ($self, %opt) = @_;
    return map { _copy($_) } @{ $self->_state(_at('for_readers', %opt))->{loads} };
}

# The dictionary the writers of $prefix used last before the current one:
# what a rollback goes back to.
sub previous {
    my ($self, $prefix, %opt) = @_;
    my $e = defined $prefix ? $self->_state(_at('previous', %opt))->{previous}{$prefix} : undef;
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
    return $self->_state(_at(q{next_change}, %opt))->{next_change};
}

# Each entry's state at $at, and since when: current (the one writers of
# its prefix use), staged (they will from its decision's effective time), retired.
sub schedule {
    my ($self, %opt) = @_;
    return map { +{ entry => _copy($_->{entry}), state => $_->{state}, since => $_->{since},
                    wrote => $_->{wrote} } } @{ $self->_state(_at(q{schedule}, %opt))->{rows} };
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
    # The set line, which holds it, is written once: a written set keeps
    # the one it has (none: its prefixes' last characters are guessed).
    my $was = $self->delimiter;
    return $was if defined $self->{text} && !defined $was;
    return $d if defined $was && $was eq $d;
    Carp::croak("set_delimiter: this set's prefixes end with " . quoted_value($was)
              . ' (its set line, written once, says so): make a new set for another') if defined $self->{text};
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
    my $e = $self->entry($id) or Carp::croak("no dictionary with ID " . quoted_value($id) . " in the set in $self->{dir}");
    return File::Spec->catfile($self->{dir}, $e->{file});
}

# The bytes of dictionary $id, checked against the manifest: croaks when
# the file is missing, truncated, replaced, or another set's.
sub dictionary_bytes {
    my ($self, $id) = @_;
    my $e = $self->entry($id) or Carp::croak("no dictionary with ID " . quoted_value($id) . " in the set in $self->{dir}");
    return $self->{pending}{ $e->{id} } if $self->{pending} && exists $self->{pending}{ $e->{id} };
    my $path = File::Spec->catfile($self->{dir}, $e->{file});
    my $bytes = slurp($path);
    Carp::croak("$path: cannot read dictionary $e->{id} (prefix " . quoted_value($e->{prefix}) . "): $!")
        unless defined $bytes;
    my $why = file_mismatch($e, $bytes);
    Carp::croak("$path: $why: not the file of dictionary $e->{id} (prefix " . quoted_value($e->{prefix})
              . ") that the manifest lists (truncated, replaced, or of another set)") if $why;
    return $bytes;
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
    my $path = manifest_path($dir);
    Carp::croak("$dir holds a dictionary set already ($path): read it instead") if -e $path;
    return bless {
        dir => $dir, identity => new_identity(), format => $FORMAT, entries => [], removed => [], fallback => undef,
        decisions => [], text => undef, newest => undef, unwritten => [],
        set_fields => { created => manifest_date(now()) }, manifest_sha256 => undef,
    }, $class;
}

my @ADD_OPTIONS = qw(prefix dictionary level id savings samples trained current_from stage);
my @DICTIONARY_FIELDS = @{ $Cache::Memcached::RustXS::Zstd::DictionarySet::Manifest::FIELDS{dictionary} };

sub add {
    my ($self, %opt) = @_;
    my %known = map { ($_ => 1) } @ADD_OPTIONS;
    my %extra = map { ($_ => $opt{$_}) } grep { !$known{$_} } keys %opt;
    _check_fields('add', \%extra, @DICTIONARY_FIELDS);
    my $prefix = $opt{prefix};
    Carp::croak('add: prefix is needed (the empty string matches every key)') unless defined $prefix;
    Carp::croak('add: prefix must be bytes, not a wide-character string')
        if utf8::is_utf8($prefix) && !utf8::downgrade($prefix, 1);
    Carp::croak('add: level is needed: the zstd level writers use with this dictionary')
        unless defined $opt{level};
    Carp::croak("add: level must be a zstd level ($Cache::Memcached::RustXS::Zstd::DictionarySet::Manifest::MIN_LEVEL"
              . " to $Cache::Memcached::RustXS::Zstd::DictionarySet::Manifest::MAX_LEVEL), not " . quoted_value($opt{level}))
        unless is_level($opt{level});
    my $stage = _stage_option('add', \%opt);
    my $bytes = $opt{dictionary};
    Carp::croak('add: dictionary (the bytes of a zstd dictionary) is needed') unless defined $bytes;
    Carp::croak('add: dictionary must be bytes, not a wide-character string')
        if utf8::is_utf8($bytes) && !utf8::downgrade($bytes, 1);
    my $id = header_id($bytes);
    Carp::croak('add: dictionary is not a standard zstd dictionary (no magic number 37 A4 30 EC, or ID 0)')
        unless defined $id;
    if (defined $opt{id} && $opt{id} ne $id) {
        Carp::croak("add: id must be 1 to $MAX_ID, not " . quoted_value($opt{id})) unless is_id($opt{id});
        $bytes = _with_id($bytes, $opt{id});
        $id = $opt{id};
    }
    if (my ($same, $how) = $self->_id_user($id)) {
        Carp::croak("add: dictionary ID $id is in the set already (prefix " . quoted_value($same->{prefix})
                  . ", $how"
                  . '): two dictionaries with one ID are refused; give another id');
    }
    my $loaded = loaded_state($id, $bytes);
    Carp::croak("add: a different dictionary with ID $id is loaded in this process: "
              . 'two dictionaries with one ID are refused; give another id') if $loaded eq 'different';
    _check_engine($bytes);
    for my $name (qw(savings samples)) {
        next unless defined $opt{$name};
        my $ok = $name eq 'savings' ? is_percent($opt{$name}) : is_count($opt{$name});
        Carp::croak("add: $name must be " . ($name eq 'savings' ? 'a percentage' : 'a count') . ', not '
                  . quoted_value($opt{$name})) unless $ok;
    }
    my $now = $self->check_clock;
    my %e = (
        %extra,
        id => $id, prefix => $prefix, file => $self->_file_name($prefix, $id),
        level => 0 + $opt{level}, size => length $bytes, sha256 => Digest::SHA::sha256_hex($bytes),
        trained => manifest_date(defined $opt{trained} ? $opt{trained} : $now, 'add: trained'),
    );
    $e{savings} = $opt{savings} if defined $opt{savings};
    $e{samples} = $opt{samples} if defined $opt{samples};
    my $effective = defined $stage ? ($stage > 0 ? staged_start($now, $stage) : $now)
                  : defined $opt{current_from} ? epoch_of(manifest_date($opt{current_from}, 'add: current_from'))
                  : $now;
    push @{ $self->{entries} }, \%e;
    push @{ $self->{unwritten} }, [ dictionary => \%e ];
    $self->{pending}{$id} = $bytes;
    $self->_decide(kind => 'train', prefix => $prefix, id => $id, made => $now, effective => $effective,
                   stage => $stage);
    return _copy(\%e);
}

# Now (whole seconds), or croaks, changing nothing, when the clock is
# earlier than the newest line of the set's log: time only moves forward.
sub check_clock {
    my ($self) = @_;
    Carp::croak('check_clock takes no arguments') if @_ > 1;
    my $now = int now();
    my $newest = $self->{newest};
    Carp::croak('the clock says ' . manifest_date($now) . ', earlier than the newest line of the set\'s log ('
              . ($newest->{line} ? "line $newest->{line}" : 'made in this run') . ", $newest->{date}): "
              . 'time only moves forward: nothing was changed; run it where the clock is right')
        if $newest && $now < $newest->{time};
    return $now;
}

sub _newest_is { $_[0]{newest} = { time => $_[1], date => manifest_date($_[1]) } }

# Appends a decision (kind, prefix, id, made, effective; stage: seconds
# after the write, when write gives it its effective time). A time given
# earlier than made is made: a decision takes effect when made or later.
sub _decide {
    my ($self, %d) = @_;
    my $stage = delete $d{stage};
    my $seq = @{ $self->{decisions} } ? $self->{decisions}[-1]{seq} + 1 : 1;
    $d{effective} = $d{made} if $d{effective} < $d{made};
    my $decision = { %d, seq => $seq };
    push @{ $self->{decisions} }, $decision;
    push @{ $self->{unwritten} }, [ decision => $decision ];
    $self->{stage_on_write}{$seq} = $stage if defined $stage && $stage > 0;
    $self->_newest_is($d{made});
    return $decision;
}

# Options beyond the known ones of add and set_fallback are fields kept in
# the manifest: lower-case names, none of @reserved, defined values.
sub _check_fields {
    my ($who, $fields, @reserved) = @_;
    my %reserved = map { ($_ => 1) } @reserved;
    for my $name (sort keys %$fields) {
        Carp::croak("$who: unknown option $name (extra fields are lower-case words: [a-z][a-z0-9_]*)")
            unless $name =~ /\A[a-z][a-z0-9_]*\z/ && !$reserved{$name};
        Carp::croak("$who: $name must be defined") unless defined $fields->{$name};
    }
    return;
}

# The stage option of add and make_current: seconds after the set is
# written, or undef; croaks with current_from beside it.
sub _stage_option {
    my ($who, $opt) = @_;
    return undef unless defined $opt->{stage};
    Carp::croak("$who: stage and current_from cannot go together") if defined $opt->{current_from};
    Carp::croak("$who: stage must be seconds, not " . quoted_value($opt->{stage}))
        unless $opt->{stage} =~ /\A[0-9]+(?:\.[0-9]*)?\z/;
    return $opt->{stage};
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

sub _taken_ids { return { map { ($_->{id} => 1) } @{ $_[0]{entries} }, @{ $_[0]{removed} } } }

sub unused_id {
    my ($self, %opt) = @_;
    return lowest_unused_id($self->_taken_ids, $opt{from});
}

# A random ID that no dictionary of the set has or had, that this process
# has not loaded, and that is not among @{ $opt{avoid} } (the IDs that
# stored values name): two sets made apart then share an ID only by chance.
sub new_id {
    my ($self, %opt) = @_;
    Cache::Memcached::RustXS::_check_options('new_id', \%opt, 'avoid');
    Carp::croak('new_id: avoid must be an array reference of IDs')
        if defined $opt{avoid} && ref $opt{avoid} ne 'ARRAY';
    my $taken = $self->_taken_ids;
    $taken->{$_} = 1 for grep { defined } @{ $opt{avoid} || [] };
    return random_unused_id($taken);
}

# Retires dictionary $id: writers of its prefix stop using it (a retire
# decision, effective at the time given or now), or, for one staged, its
# decision is cancelled; for one retired already, nothing changes.
sub retire {
    my ($self, $id, %opt) = @_;
    Cache::Memcached::RustXS::_check_options('retire', \%opt, 'retired');
    my $e = $self->_entry_of('retire', $id);
    my $when = defined $opt{retired} ? epoch_of(manifest_date($opt{retired}, 'retire: retired')) : undef;
    my $now = $self->check_clock;
    my $p = $self->_state($now)->{fold}{prefixes}{ $e->{prefix} } || {};
    if ($p->{pending} && defined $p->{pending}{id} && $p->{pending}{id} eq $id) {
        $self->_decide(kind => 'cancel', prefix => $e->{prefix}, made => $now, effective => $now);
    }
    elsif (defined $p->{writer} && $p->{writer} eq $id) {
        $self->_decide(kind => 'retire', prefix => $e->{prefix}, id => $id, made => $now,
                       effective => defined $when ? $when : $now);
    }
    return _copy($e);
}

# The entry of $id, or croaks saying why there is none.
sub _entry_of {
    my ($self, $who, $id) = @_;
    my ($e) = grep { $_->{id} eq $id } @{ $self->{entries} };
    return $e if $e;
    Carp::croak("$who: dictionary $id was removed from the set (its file is gone): train another")
        if grep { $_->{id} eq $id } @{ $self->{removed} };
    Carp::croak("$who: no dictionary with ID " . quoted_value($id) . ' in the set');
}

# Makes dictionary $id its prefix's writers' dictionary (a rollback): from
# current_from (epoch seconds or a date; now by default), or stage seconds
# after the set is written. For the dictionary writers use now while a
# decision is pending: a cancel of that decision. Refused when its file
# is missing or is not the one the manifest lists.
sub make_current {
    my ($self, $id, %opt) = @_;
    Cache::Memcached::RustXS::_check_options('make_current', \%opt, qw(current_from stage));
    my $stage = _stage_option('make_current', \%opt);
    my $e = $self->_entry_of('make_current', $id);
    eval { $self->dictionary_bytes($id); 1 }
        or Carp::croak('make_current: ' . Cache::Memcached::RustXS::_error_message($@) . ': refused, nothing changed');
    my $now = $self->check_clock;
    my $p = $self->_state($now)->{fold}{prefixes}{ $e->{prefix} } || {};
    if (defined $p->{writer} && $p->{writer} eq $id) {
        Carp::croak("make_current: dictionary $id is the current one of prefix " . quoted_value($e->{prefix})
                  . ' already, and nothing is staged to replace it') unless $p->{pending};
        $self->_decide(kind => 'cancel', prefix => $e->{prefix}, made => $now, effective => $now);
        return _copy($e);
    }
    my $effective = defined $stage ? ($stage > 0 ? staged_start($now, $stage) : $now)
                  : defined $opt{current_from} ? epoch_of(manifest_date($opt{current_from}, 'make_current: current_from'))
                  : $now;
    $self->_decide(kind => 'rollback', prefix => $e->{prefix}, id => $id, made => $now, effective => $effective,
                   stage => $stage);
    return _copy($e);
}

# Cancels the decision pending for $prefix (writers stay on what they use
# now); returns it, or croaks when nothing is pending.
sub cancel {
    my ($self, $prefix) = @_;
    my $now = $self->check_clock;
    my $pending = $self->_state($now)->{pending}{$prefix};
    Carp::croak('cancel: nothing is pending for the prefix ' . quoted_value($prefix)) unless $pending;
    $self->_decide(kind => 'cancel', prefix => $prefix, made => $now, effective => $now);
    return { %$pending };
}

# What the decisions say of $prefix at a moment: { writer, before (entries
# or undef), pending (the decision waiting, or undef), used (ID => 1 for
# every dictionary its writers have used) }.
sub decided {
    my ($self, $prefix, %opt) = @_;
    my $state = $self->_state(_at('decided', %opt));
    my $f = $state->{fold};
    my $p = $f->{prefixes}{$prefix} || {};
    return { writer => $state->{writers}{$prefix} ? _copy($state->{writers}{$prefix}) : undef,
             before => $state->{previous}{$prefix} ? _copy($state->{previous}{$prefix}) : undef,
             pending => $p->{pending} ? { %{ $p->{pending} } } : undef,
             used => { map { ($_ => 1) } keys %{ $f->{used} } } };
}

# The decisions (of one prefix), in order, each with what became of it at
# a moment: status (in effect, took effect, superseded, pending), by (the
# seq that superseded it), cancels (the seq a cancel cancelled).
sub history {
    my ($self, %opt) = @_;
    my $prefix = delete $opt{prefix};
    my $f = $self->_state(_at('history', %opt))->{fold};
    return map { my %d = (%$_, %{ $f->{decisions}{ $_->{seq} } || { status => 'not made yet' } }); delete $d{line}; \%d }
           grep { !defined $prefix || $_->{prefix} eq $prefix } @{ $self->{decisions} };
}

sub remove {
    my ($self, $id) = @_;
    my ($e) = grep { $_->{id} eq $id } @{ $self->{entries} };
    Carp::croak("remove: no dictionary with ID " . quoted_value($id) . " in the set") unless $e;
    my $now = $self->check_clock;
    my $state = $self->_state($now);
    my $writing = $state->{writers}{ $e->{prefix} };
    Carp::croak("remove: dictionary $id is current for prefix " . quoted_value($e->{prefix}) . ': retire it first')
        if $writing && $writing == $e;
    my $pending = $state->{pending}{ $e->{prefix} };
    Carp::croak("remove: dictionary $id is staged for prefix " . quoted_value($e->{prefix}) . ': cancel it first')
        if $pending && defined $pending->{id} && $pending->{id} eq $id;
    $self->{entries} = [ grep { $_ != $e } @{ $self->{entries} } ];
    delete $self->{pending}{$id} if $self->{pending};
    push @{ $self->{removed_files} }, $e->{file};
    my $r = { id => $e->{id}, prefix => $e->{prefix}, removed => manifest_date($now) };
    push @{ $self->{removed} }, $r;
    push @{ $self->{unwritten} }, [ removed => $r ];
    $self->_newest_is($now);
    return _copy($e);
}

sub set_fallback {
    my ($self, %opt) = @_;
    my %f = %opt;
    $f{measured} = manifest_date($f{measured}, 'set_fallback: measured') if defined $f{measured};
    _check_fields('set_fallback', \%f);
    for my $need (@{ $Cache::Memcached::RustXS::Zstd::DictionarySet::Manifest::REQUIRED{fallback} }) {
        Carp::croak("set_fallback: $need is needed") unless defined $f{$need};
    }
    eval { check_fallback_fields(\%f, 'set_fallback'); 1 } or do { (my $e = $@) =~ s/\n\z//; Carp::croak($e) };
    $f{level} += 0;
    $self->{fallback} = \%f;
    # A fallback measured again is a line appended; one line a run.
    $self->{unwritten} = [ (grep { $_->[0] ne 'fallback' } @{ $self->{unwritten} }), [ fallback => \%f ] ];
    return _copy(\%f);
}

# ---- writing ---------------------------------------------------------------

# The manifest's text: the lines read, byte for byte, then one line for
# each record added since (a new set: its header and set line first).
sub as_string {
    my ($self) = @_;
    my $text = defined $self->{text} ? $self->{text}
             : manifest_header() . record_line(set => { %{ $self->{set_fields} }, id => $self->{identity} });
    for my $u (@{ $self->{unwritten} }) {
        my ($kind, $r) = @$u;
        $r = { seq => $r->{seq}, kind => $r->{kind}, prefix => $r->{prefix}, dictionary => $r->{id},
               made => manifest_date($r->{made}), effective => manifest_date($r->{effective}) }
            if $kind eq 'decision';
        $text .= record_line($kind, $r);
    }
    return $text;
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
    my $path = manifest_path($dir);
    my $on_disk = slurp($path);
    my $disk_sha = defined $on_disk ? Digest::SHA::sha256_hex($on_disk) : undef;
    if (defined $disk_sha ? !defined $self->{manifest_sha256} || $disk_sha ne $self->{manifest_sha256}
                          : defined $self->{manifest_sha256}) {
        Carp::croak("write: $path changed since this set was read (another writer?): read it again");
    }
    # What was staged for some seconds after the write starts then.
    my $now = now();
    my %stage = %{ delete $self->{stage_on_write} || {} };
    $_->{effective} = staged_start($now, $stage{ $_->{seq} }) for grep { $stage{ $_->{seq} } } @{ $self->{decisions} };
    # The log written must read back: what cannot be true is never written.
    my $text = $self->as_string;
    my $again = eval { _check_removals(parse_manifest($dir, $text)) };
    unless ($again) {
        (my $why = $@) =~ s/\n\z//;
        Carp::croak("write: the manifest would not read back ($why): refused, nothing written");
    }
    # Dictionary files first, so that every file a manifest names exists
    # when that manifest appears.
    my %pending = %{ $self->{pending} || {} };
    for my $e (@{ $self->{entries} }) {
        next unless exists $pending{ $e->{id} };
        my $file = File::Spec->catfile($dir, $e->{file});
        my $existing = slurp($file);
        next if defined $existing && !file_mismatch($e, $existing);
        atomic_write($file, $pending{ $e->{id} });
    }
    atomic_write($path, $text);
    @$self{qw(text manifest_sha256 entries decisions newest removed fallback)}
        = @$again{qw(text manifest_sha256 entries decisions newest removed fallback)};
    $self->{unwritten} = [];
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

# ---- what the engine provides ----------------------------------------------
#
# The engine's XSUBs of the Zstd package, booted with
# Cache::Memcached::RustXS: Zstd.pm loads this module, never the reverse.

sub _with_id {
    my ($bytes, $id) = @_;
    my $out = eval { Cache::Memcached::RustXS::Zstd::dictionary_with_id($bytes, $id) };
    Carp::croak('add: ' . Cache::Memcached::RustXS::_error_message($@)) unless defined $out;
    return $out;
}

sub _check_engine {
    my ($bytes) = @_;
    my $ok = eval { Cache::Memcached::RustXS::Zstd::dictionary_id($bytes) };
    Carp::croak('add: ' . Cache::Memcached::RustXS::_error_message($@)) unless $ok;
    return;
}

1;
__END__

=head1 NAME

Cache::Memcached::RustXS::Zstd::DictionarySet - a folder of zstd dictionaries, one per key prefix, with their manifest

=head1 SYNOPSIS

    use File::Temp ();
    use Cache::Memcached::RustXS::Zstd qw(train_dictionary);
    use Cache::Memcached::RustXS::Zstd::DictionarySet;

    my $tmp = File::Temp->newdir;              # removed at exit
    my $dir = "$tmp/dictionaries";
    my @users = map { qq({"id":$_,"name":"user$_","plan":"free","tags":["a","b"]}) } 1 .. 500;
    my @posts = map { qq({"post":$_,"title":"Post $_","body":"text of post $_"}) } 1 .. 500;

    # A trainer makes a set, or reads the one it made before
    my $set = Cache::Memcached::RustXS::Zstd::DictionarySet->create($dir);
    my $user = $set->add(prefix => 'user:', dictionary => train_dictionary(\@users), level => 9,
                         savings => 61.5, samples => 500, id => $set->new_id);
    $set->add(prefix => 'post:', dictionary => train_dictionary(\@posts), level => 9,
              savings => 55.0, samples => 500);
    $set->set_fallback(method => 'zstd', level => 3, savings => 12.5, samples => 800);
    $set->write;                                # atomically: files, then the manifest

    # Later: a better dictionary for user:, staged: writers use it from an
    # hour on (the old one stays, retired); a reader loads it when it
    # first meets a value written with it
    $set = Cache::Memcached::RustXS::Zstd::DictionarySet->read($dir);
    my $new = $set->add(prefix => 'user:', dictionary => train_dictionary([@users, @posts]),
                        level => 9, id => $set->new_id, current_from => time + 3600);
    $set->write;

    # Changed our mind: user:'s first dictionary stays (the staged decision
    # is cancelled); after the hour, the same call would go back to it
    $set = Cache::Memcached::RustXS::Zstd::DictionarySet->read($dir);
    $set->make_current($user->{id});
    $set->write;

    # What a reader or a writer sees, and since when
    for my $row ($set->schedule) {
        my $e = $row->{entry};
        printf "%-6s ID %-10d %-8s since %-20s level %d %s\n", $e->{prefix}, $e->{id}, $row->{state},
            $row->{since} || '?', $e->{level} || 0, $e->{file} || '';
    }
    my $for = $set->for_key('user:1234');       # the current dictionary of user: ($user)
    my $bytes = $set->dictionary_bytes($for->{id});   # checked against the manifest

    # Every process: all of them loaded, and found again as they are deployed
    Cache::Memcached::RustXS::Zstd::load_dictionaries($dir, rescan_interval => 60);

=head1 DESCRIPTION

A dictionary set is a folder of standard zstd dictionary files (the format
C<zstd --train> writes and C<zstd -D> reads) and a manifest that says which
dictionary goes with which key prefix, at which zstd level, and what it was
measured to save. C<cmrx-dict train --all> writes sets;
L<Cache::Memcached::RustXS::Zstd/"load_dictionaries($dir, rescan_interval =E<gt> 60)"> reads them in every
process, and the writers (L<Cache::Memcached::RustXS::Zstd/"compress_methods(dictionaries =E<gt> $dir, rescan_interval =E<gt> 60, max_output =E<gt> 64 MiB)">
for Cache::Memcached::Fast, L<Cache::Memcached::RustXS::Memcached> for
Cache::Memcached) pick the dictionary of each key by its prefix.

Dictionaries are added, never changed in place: when a prefix gets a new
dictionary, the one before stays in the set, I<retired>, so that values
written with it still decode, until no stored value names it any more
and it is removed (L</remove>, L<cmrx-dict/prune>).

=head2 Staging and rolling back

A dictionary must not be written before every reader that may meet it has
it. So a dictionary can be added I<staged> (L</add> with C<stage> or
C<current_from>): every process loads it when it reads the set (see
L</What a process loads, and when>), and writers go on writing the
prefix's current dictionary until the time it takes effect, then write the
new one, on every host at that moment, without a restart. Ship a set with
staged entries to every host once; stage it longer than the time it takes
to reach the last host plus the rescan interval, and no writer anywhere
uses a dictionary that a reader lacks. A host that gets the set after the
staged time is the one case of misses (never wrong values): its readers
miss the new values until they load the set, and its writers switch as
soon as they read it. C<cmrx-dict train --all> stages
what it adds (C<--stage>, one hour by default). A stage counts from the
L</write> of the set, not from the call: the decision takes effect at the
next whole second after the write and the stage, plus one, so at least the
stage after the command that wrote the set has finished. On one host, or
before any process loads the set, nothing needs protecting: C<--stage 0>
(C<stage =E<gt> 0>) makes it current at once.

Rolling back is the same move backwards: L</make_current> makes an earlier
dictionary of a prefix current again (every reader still has it: retired
dictionaries stay loaded), and L</cancel> cancels what is pending. Which
dictionary writers use at any moment follows from the set's decisions by
one rule, below; every answer about time (L</current>, L</for_key>,
L</schedule>, L</previous>, L</next_change>, L</decided>, L</history>)
comes from one function,
L<Cache::Memcached::RustXS::Zstd::DictionarySet::State>'s C<fold> of the
decisions, and "now" is its clock, which tests move instead of sleeping.

=head2 The newest decision holds

A set records its I<decisions>: each change of what a prefix's writers use
is one, a C<decision> line of the manifest's log (L</The manifest>). A
decision has a number, C<seq> (1, 2, 3 ... in the order
made), a kind, a prefix (the empty prefix: the whole-cache entry), a
dictionary, when it was made and when it takes effect: made plus its
stage, at once without one. The kinds: C<train> (C<cmrx-dict train --all>
adding a prefix's first dictionary or replacing it; L</add>), C<rollback>
(back to a dictionary writers used before, or to the one C<--to> names;
L</make_current>), C<cancel> (a rollback while a decision is pending;
L</cancel>) and C<retire> (only L</retire> makes one: the prefix's writers
stop using the dictionary, at the time given).

The rule:

=over 4

=item 1. A decision supersedes what has not taken effect.

A decision supersedes every decision of its prefix that has not taken
effect when it is made (whose effective time is later than the new one's
made time). Superseded decisions never take effect. Staged times delay,
they never reorder: an older staged decision can never take over from a
newer one. Order is by C<seq>, never by time, so several decisions made in
one second are ordered as they were made.

=item 2. What writers use.

At a time T, a prefix's writers use the dictionary of the latest decision
(by C<seq>) made by T, not superseded by a decision made by T, and in
effect by T; a cancel changes nothing, so after one they use what they used
before it. Without such a decision (or when the only one is a cancel of the
prefix's very first dictionary) they use what keys of a prefix without a
dictionary get: the whole-cache entry, or the fallback. Pending at T: the
decision not superseded that takes effect after T (at most one a prefix).
"Used before": the dictionary writers used before the current one took
effect.

=item 3. What a rollback does.

C<cmrx-dict rollback --prefix P> without C<--to>: while a decision is
pending for P, a C<cancel>, in effect at once: writers stay on what they
use now (for a staged first dictionary: the whole-cache entry or the
fallback), and the command says which decision it cancelled. Otherwise,
back to what writers used before the current one; when there is nothing to
go back to, it is refused ("has no earlier dictionary to go back to").
C<rollback --to ID> goes to that dictionary, which must be one of P's. A
rollback to a dictionary writers have used takes effect at once unless
C<--stage> is given (every reader holding the set loads it already); a
rollback to a dictionary no writer has used yet is staged like
C<train --all> (an hour by default) unless C<--stage> is given.

=item 4. What is refused.

A decision naming a dictionary whose file is missing, unreadable or not the
file the manifest lists is refused: the message names the file, nothing
changes, and C<cmrx-dict> exits with the status of its other errors of data
(1). So is C<train --all> into a folder that holds C<.dict> files but no
manifest: to start over, give an empty folder or remove those files; to
keep the set, restore its manifest. So is every command that would add to
the log with a clock behind it (L</Time only moves forward>), and every
command on a log that cannot be true (L</What a reader refuses>).

=item 5. Where to read it.

L<cmrx-dict/history> lists the decisions and what became of each,
L<cmrx-dict/list> each dictionary's state; both come from this fold.

=item 6. Prefixes with or without their delimiter.

C<--prefix user> and C<--prefix user:> mean the same in every command
(C<train>, C<report>, C<rollback>, C<history>).

=item 7. What readers load.

Every dictionary of the set, whatever its state
(L</What a process loads, and when>).

=back

=head2 What a process loads, and when

=over 4

=item At start

L<Cache::Memcached::RustXS::Zstd/load_dictionaries($dir, rescan_interval =E<gt> 60)>
loads every dictionary of the set, current, staged and retired (a retired
one until C<cmrx-dict prune> removes it), checks each file against the
manifest, and prepares each at its level; before a preforking server
forks, so that the workers share them
(L<Cache::Memcached::RustXS::Operations/PREFORKING SERVERS>).

=item A writer, while it runs

A writer of a set (C<compress_methods> or C<fast_options> with
C<dictionaries>, L<Cache::Memcached::RustXS::Memcached> with C<zstd =E<gt>
{ dictionaries }>) reads the manifest again at a write once
C<rescan_interval> (60 s by default) has passed since its last reading,
loads the dictionaries added, and follows the decisions: a staged one from
its time (it decides again then, without reading the set), one in effect
at once (a rollback to a dictionary writers used, a cancel) from that
reading.

=item A process that only reads

A reader (GetParser, the decompressors of C<compress_methods>,
C<decompress>) reads the set again only when it meets a value whose
dictionary it has not loaded, at most once per C<rescan_interval>, the
first time no sooner than C<rescan_interval> after C<load_dictionaries>. It
never reads on a timer: holding the set as it was at its start for days
is right, since it loads a dictionary when it needs it. A value met while
the rescan is not due yet is a miss until it is.

=item A set that cannot be read

A rescan that cannot read the set (a half-copied file, another set's
manifest, a log refused by a check below) keeps what the process loaded
and goes on writing and reading with it, warns once per
C<$Cache::Memcached::RustXS::Zstd::WarnInterval> (60 s), and counts it
under C<sets-E<gt>{unreadable_rescans}> of
L<Cache::Memcached::RustXS::Zstd/counters()>; the next rescan that reads
it takes it up.

=back

=head2 Time only moves forward

A line of the log is never dated before the newest line already there:
a command that would append one (a decision, a removal: L</add>,
L</make_current>, L</retire>, L</cancel>, L</remove>, and C<cmrx-dict
train --all>, C<rollback> and C<prune>, dry runs included) with a clock
earlier than the log's newest time refuses, names both times and changes
nothing; within the same second is fine. So a host whose clock is behind
cannot rewrite what the log says happened (a decision "superseded" before
it was made, a dictionary "retired" before it was current). Run the
commands that change a set on one admin host whose clock NTP keeps
(L<Cache::Memcached::RustXS::Operations/WHERE TO RUN CMRX-DICT>).
L</check_clock> asks first; C<CMRX_DICT_NOW> sets C<cmrx-dict>'s clock
(L<cmrx-dict/ENVIRONMENT>), C<$Cache::Memcached::RustXS::Zstd::DictionarySet::State::Clock>
the module's.

Reading a set needs only core modules (L<Digest::SHA> for the files'
checksums).

=head2 Prefixes

A dictionary's prefix is matched against the key B<as memcached stores it>:
with the client's C<namespace> in front. A key gets the current dictionary
with the longest prefix it starts with; a key that starts with none gets
the set's fallback. A prefix is a literal string, usually ending in the
delimiter the keys use (C<user:> for keys C<user:1234>); the empty prefix
matches every key. So sites that give each application a namespace train and
list its prefixes with the namespace (C<app1:user:>), as C<cmrx-dict> sees
them on the server.

=head2 The whole-cache entry

The current dictionary of the empty prefix is the set's B<whole-cache
entry>: C<cmrx-dict train --all> tunes it on the values of every prefix,
pooled as memcached holds them (each prefix's share of the pool in
proportion to its keys), for writers that cannot see keys -- a single
Cache::Memcached::Fast object for the whole application, whose compressor
is never given the key. C<compress_methods(dictionaries =E<gt> DIR)>
without C<prefix> writes with it (L</whole_cache>).

As the empty prefix it matches every key, so writers that do see keys
(L<Cache::Memcached::RustXS::Memcached>, C<compress_methods> with a
C<prefix>) give it to keys whose prefix has no dictionary of its own --
unless its line says C<other_keys=0>: the trainer measured that the
fallback stores those keys' values in less memory, and they get the
fallback (L</for_key>). Without the field (C<other_keys=1>, or a set
made by hand), it is used for them. Its name in every list is the empty
string; C<cmrx-dict> shows it as C<'' (the whole cache)>.

=head2 The manifest

The file C<manifest> in the folder is the set's log: text, one record a
line, fields C<name=value> separated by single spaces; a byte of a value
outside printable ASCII, a space and C<%> are written C<%XX>
(hexadecimal). Lines starting with C<#> and empty lines are comments.
Lines are appended in order and never rewritten: a write may replace the
file whole (through a new file and a rename, under the folder's lock), but
every line it had stays byte for byte, and new lines follow. An example:

    cmrx-dictionary-set 2 release=1.000
    # A zstd dictionary set, one record a line, appended in order: Cache::Memcached::RustXS::Zstd::DictionarySet describes this file.
    set id=3f0c9a5be1d24c8e9b7a6d5c4b3a2f10 created=2026-05-01T10:00:00Z delimiter=:
    dictionary id=1 prefix=user: file=user-1.dict level=9 size=16384 sha256=9f86... savings=61.5 samples=500 trained=2026-05-01T10:00:00Z
    decision seq=1 kind=train prefix=user: dictionary=1 made=2026-05-01T10:00:00Z effective=2026-05-01T10:00:00Z
    fallback method=zstd level=3 savings=12.5 samples=800 measured=2026-05-01T10:00:00Z
    dictionary id=2716305118 prefix=user: file=user-2716305118.dict level=9 size=16384 sha256=fd61a... trained=2026-06-01T10:00:00Z
    decision seq=2 kind=train prefix=user: dictionary=2716305118 made=2026-06-01T10:00:00Z effective=2026-06-01T11:00:01Z
    removed id=1 prefix=user: removed=2026-07-01T10:00:00Z

=over 4

=item C<cmrx-dictionary-set 2 release=1.000> (written once)

The first line: the format's name and number, and the release that made
the set. A reader refuses a newer format, naming the release it needs
(that of the C<release> field); a set of format 1 (development versions,
never released) is refused too, with what to do: make a new set in an
empty folder, roll it out, retire the old folder. Neither is changed.

=item C<set id=... created=DATE delimiter=D> (written once)

The set's identity: 32 hexadecimal digits, random, made when the set is
created. A reader that has loaded a set refuses a manifest of another
identity in the same folder (another set copied over it) instead of mixing
the two. C<delimiter>: the character that ends the keys' prefixes, as
C<cmrx-dict train --all> grouped them, by which a writer's prefix given
without it is matched (L</resolve_prefix>).

=item C<dictionary id=N prefix=P file=F level=N size=N sha256=HEX savings=PCT samples=N trained=DATE> (written once, when added)

One dictionary. C<id> is the ID in its header (1 to 4294967295), which
every frame made with it names; no two lines share one, so no ID is given
twice, a removed one's neither. C<file> is its file's name in the folder.
C<level> is the zstd level writers use with it (-7 to 22). C<size> and
C<sha256> are its file's length and SHA-256: a file that is truncated,
replaced, or another set's is refused instead of used. C<savings> is the
percentage of held-out values' bytes it saves, C<samples> the number of
values it was trained on, C<trained> when: optional. Other fields (the
trainer's C<memory_savings>, C<method>, ...; C<other_keys=0> on the
whole-cache entry, L</The whole-cache entry>) are kept as they are and
given back in L</entries>.

=item C<decision seq=N kind=K prefix=P dictionary=ID made=DATE effective=DATE> (appended)

One decision (L</The newest decision holds>): C<kind> is C<train>,
C<rollback>, C<cancel> (no C<dictionary>) or C<retire>; C<made> when it was
made, C<effective> when it takes effect. What each prefix's writers use is
the fold over these lines by C<seq>.

=item C<fallback method=zstd|gzip level=N savings=PCT samples=N measured=DATE> (appended)

What to write for keys that no dictionary's prefix matches, as the trainer
measured it: zstd without a dictionary, or gzip (the format every client
reads) at a gzip level (0 to 12). The last one holds; each re-measure
appends one. Without any: gzip at level 9, what the clients write without
this distribution.

=item C<removed id=N prefix=P removed=DATE> (appended)

A dictionary removed by a prune (L</remove>): its file is gone, its
dictionary line stays (values may still name its ID, which is never given
again).

=back

Dates are ISO 8601 in UTC to the second. A later release may add, without
a new format number, line kinds and fields that this release skips when
it reads (so its readers keep working on the set), as long as what they
record changes nothing this release computes: which dictionary each
prefix's writers use, which dictionaries a reader loads and checks, and
which IDs are taken. Anything that would change those (a new kind of
decision, another way to name a file, another order) needs a new format
number, which this release refuses to read. A cut within a line (no
newline at the end) is refused; a file cut at the end of a line is read
as the log up to there (an earlier state of the set, every dictionary it
names still loadable).

=head2 What a reader refuses

A manifest that cannot be true is refused whole, naming the line and the
check, and no command writes over it (the file is left as it is; restore
it from where the set is kept): a line that is not C<name=value> fields,
a field given twice, a required field missing, a value of the wrong form
(an ID, a level, a size, a SHA-256, a date); a second C<set> line, or a
line before it; two dictionary lines with one ID or one file; a decision
whose C<seq> is not the one after the line before (repeated, out of order
or missing), of an unknown kind, or with no dictionary where its kind
needs one; a decision naming an ID that no dictionary line before it has,
a removed dictionary, or a dictionary of another prefix; a decision whose
C<effective> is before its C<made>; a decision or removal dated before the
newest such line above it (time going backwards); a removal of an ID no
dictionary line has, of one removed already, or of one its prefix's
writers use or are to take up at its time; a format newer than this
release or format 1. L</read> dies with it, L</write> refuses to write a
log that would not read back, and a running process keeps what it loaded
(L</What a process loads, and when>).

=head2 Dictionary IDs

Every zstd frame names the ID of the dictionary it was written with, and
carries nothing else that says which dictionary that is: a reader that has
another dictionary under the same ID decodes the value to wrong bytes. So
IDs must not meet across sets that write to the same caches -- a set made
again from scratch (a new folder, another host, a folder lost) while values
of the old one live, or two teams' sets. L</new_id>,
which C<cmrx-dict train --all> uses, draws IDs at random from 65536 to
4294967295, skipping the IDs the set has or had, those loaded in the
process, and those asked to avoid: C<cmrx-dict> avoids every ID that the
values it sampled from the servers name. Two sets made apart, with I<n>
and I<m> dictionaries over their lives, share an ID with a chance of at
most I<n> x I<m> / 4294901760: below one in a million for sets of up to 65
dictionaries each (I<n> x I<m> up to 4294), one in 268 million for 4 each.
A random ID takes 4 bytes in each frame, 3 more than an ID below 256;
the memory benchmark (F<bench/README.md>) shows what that costs in items: on its JSON
values (about 155 bytes stored each) a 64 MB memcached held 0.9 % fewer
items with a Fast object per prefix (214,895 against 216,906 with the same
set under IDs 1 to 4), and as many with one Fast object for every key
(202,589 against 202,460).

Smaller IDs can still be given (L</add> with C<id>, which
rewrites the ID in the dictionary's header; the content does not change,
and C<zstd -d -D FILE> decodes the frames as before; L</unused_id>
finds the smallest free one): 1 byte in a frame for IDs up to 255, 2 up
to 65535. Do so only while one set, kept for as long as its values may
live, writes to the caches: an ID is unique within a set over its whole
history (the IDs of removed dictionaries are not given again) and within
the processes that load it (two sets loaded by one process must not give
one ID to two dictionaries: the second is refused when it is loaded), but
a small ID given by two sets made apart is the collision above, certain.
zstd's format reserves IDs below 32768 and from 2**31 for dictionaries
shared in public; within one site's caches any ID is fine.

=head1 METHODS

=head2 read

  Cache::Memcached::RustXS::Zstd::DictionarySet->read($dir)

Reads and checks the manifest in C<$dir>; croaks, naming the file and the
line, when it is missing, is not a manifest, or is refused by a check of
L</What a reader refuses>. It does not read the dictionary files:
L</dictionary_bytes> and L</verify> do.

=head2 create

  Cache::Memcached::RustXS::Zstd::DictionarySet->create($dir)

A new, empty set for C<$dir> (which need not exist yet), with a new
identity; croaks if C<$dir> has a manifest already. Nothing is written
before L</write>.

=head2 dir, identity, format_version

  $set->dir, $set->identity, $set->format_version

The folder, the identity (32 hexadecimal digits) and the format version.

=head2 entries

  $set->entries

Every dictionary not removed, in the manifest's order: hash references
(copies) with the fields of its line (C<id>, C<prefix>, C<file>, C<level>,
C<size>, C<sha256>, and C<savings>, C<samples>, C<trained> and other fields
where the manifest has them). Its state at a moment is L</schedule>'s.

=head2 entry

  $set->entry($id)

The entry of dictionary C<$id>, or nothing.

=head2 removed

  $set->removed

The removed dictionaries: hash references with C<id>, C<prefix> and
C<removed>.

=head2 prefixes

  $set->prefixes(at => $epoch)

The prefixes that have a current dictionary, sorted.

These and the methods that follow answer for a moment: now, or the
C<at> given (epoch seconds): the I<current> entry of a prefix is the one
its writers use at that moment (see L</Staging and rolling back>).

=head2 current

  $set->current($prefix, at => $epoch)

The current entry of exactly C<$prefix>, or C<undef>.

=head2 for_readers

  $set->for_readers(at => $epoch)

The entries a reader holding the set loads: every dictionary of the set,
current, staged and retired (L<Cache::Memcached::RustXS::Zstd/load_dictionaries($dir, rescan_interval =E<gt> 60)>
loads these).

=head2 previous

  $set->previous($prefix, at => $epoch)

The entry of the dictionary C<$prefix>'s writers used before the current
one took effect (see L</The newest decision holds>), or C<undef> (none,
or the fallback): what C<cmrx-dict rollback> goes back to when nothing is
pending for the prefix. A dictionary whose decision was superseded or
cancelled before its time is never one: writers never used it.

=head2 for_key

  $set->for_key($key, at => $epoch)

The current entry with the longest prefix that C<$key> (as stored, with its
namespace) starts with, or C<undef>: the dictionary a writer uses for that
key. The whole-cache entry counts unless its line says C<other_keys=0>.

=head2 whole_cache

  $set->whole_cache(at => $epoch)

The whole-cache entry (the current entry of the empty prefix), or C<undef>.

=head2 other_keys_entry

  $set->other_keys_entry(at => $epoch)

The whole-cache entry when keys without a dictionary of their own get it
(its line does not say C<other_keys=0>), else C<undef>.

=head2 next_change

  $set->next_change(at => $epoch)

The first moment after C<at> (now) when a staged dictionary becomes
current (epoch seconds), or C<undef>: until then what writers use does
not change. The writers of this distribution decide again then.

=head2 schedule

  $set->schedule(at => $epoch)

Every dictionary, with its state at that moment and since when: a list of
hash references C<< { entry => $entry, state => $state, since => $date } >>
in the manifest's order, then the removed ones, each also with C<wrote>
(1 when writers used it before that moment). C<state> is C<current> (its
prefix's writers use it, since its decision took effect), C<staged> (they
will from C<since>), C<retired> (since writers stopped using it, or, for
one they never used, since the decision that set it aside was made) or
C<removed> (since its removal). C<cmrx-dict list> prints it.

=head2 delimiter

  $set->delimiter

The delimiter recorded on the set line (C<undef> without one).

=head2 set_delimiter

  $set->set_delimiter($delimiter)

Records it on the set line of a set not written yet. The set line is
written once: a written set keeps its delimiter (with none, a writer's
prefix is matched by the last characters of the set's prefixes), and
another is refused.

=head2 resolve_prefix

  $set->resolve_prefix($prefix, at => $epoch)

What a writer of keys that start with C<$prefix> writes with, as
L<Cache::Memcached::RustXS::Zstd/compress_methods(dictionaries =E<gt> $dir, prefix =E<gt> $prefix, rescan_interval =E<gt> 60, max_output =E<gt> 64 MiB)>
decides: a hash reference with C<entry> (a copy of the entry, or C<undef>
for the fallback) and C<how>: C<prefix> (an entry's prefix starts
C<$prefix>, the longest; for the empty C<$prefix>, the whole-cache entry),
C<delimiter> (C<$prefix> with the set's delimiter added is exactly one
entry's prefix: that entry; the delimiter is L</delimiter>, or for a set
without one, the last character of each prefix that ends in neither a
letter nor a digit), or C<none> (no entry: the whole-cache entry when other
keys get it or when C<$prefix> begins the prefix of an entry, else
C<undef>).

=head2 fallback

  $set->fallback

The fallback as a hash reference: C<method> (C<zstd> or C<gzip>), C<level>,
and C<savings>, C<samples>, C<measured> when the manifest has them. Without a
fallback line: C<< { method => 'gzip', level => 9 } >>.

=head2 path_of

  $set->path_of($id)

The path of dictionary C<$id>'s file.

=head2 dictionary_bytes

  $set->dictionary_bytes($id)

The bytes of dictionary C<$id>, after checking them against the manifest:
croaks when the file cannot be read, its size or SHA-256 differ from the
manifest's, or its header is not a zstd dictionary with that ID. (For a
dictionary added and not yet written: the bytes given.)

=head2 verify

  $set->verify

L</dictionary_bytes> of every dictionary; croaks at the first that
fails, returns 1.

=head2 add

  $set->add(%options)

Adds a dictionary and decides that it becomes the current one of its
prefix (a C<train> decision), at once or staged (C<stage> or
C<current_from>); whatever of the prefix had not taken effect is
superseded (L</The newest decision holds>). When it takes effect, the
prefix's dictionary before is retired. Returns the new entry. Options:

=over 4

=item prefix => $prefix

Required (the empty string for every key): see L</Prefixes>. Bytes.

=item dictionary => $bytes

Required: a standard zstd dictionary, as C<train_dictionary> returns it.

=item level => $level

Required: the zstd level to write with (-7 to 22).

=item id => $id

The dictionary ID to give it (1 to 4294967295), rewritten into its header;
by default the one its header has. See L</Dictionary IDs>:
C<< id => $set->new_id >> is what keeps sets made apart from meeting.

=item current_from => $when

When writers begin to use it (epoch seconds or C<YYYY-MM-DDTHH:MM:SSZ>).
A later time stages it: the prefix's current dictionary stays current
until then, and every process has the time to load the new one first
(L</What a process loads, and when>). Now or earlier, or without the
option: current at once.

=item stage => $seconds

Instead of C<current_from>: staged for C<$seconds> after the set is
written, counted as L</Staging and rolling back> says. 0: current at
once.

=item savings => $percent, samples => $count, trained => $when

What the trainer measured (see L</The manifest>); C<trained> in epoch seconds
or C<YYYY-MM-DDTHH:MM:SSZ>, by default now.

=item any_other_field => $value

Kept in the manifest as it is (lower-case names).

=back

It croaks when an option is missing or malformed, when the bytes are not a
zstd dictionary, when the set has a dictionary with that ID already (current,
retired or removed: two dictionaries with one ID are refused), and when this process
has loaded a different dictionary with that ID. The file name is assigned
here, from the prefix and the ID (C<user-3.dict>). Nothing is written before
L</write>.

=head2 unused_id

  $set->unused_id(from => 1)

The smallest ID from C<from> up that no dictionary of the set has or had
(removed ones count) and this process has not loaded.

=head2 new_id

  $set->new_id(avoid => \@ids)

A random ID from 65536 to 4294967295 that no dictionary of the set has or
had, that this process has not loaded, and that is not in C<@ids> (pass the
IDs that stored values name): see L</Dictionary IDs>.

=head2 retire

  $set->retire($id, retired => $when)

For the dictionary its prefix's writers use: a C<retire> decision, in
effect at C<$when> (epoch seconds or C<YYYY-MM-DDTHH:MM:SSZ>; now by
default): the prefix then has no current dictionary, and its keys get the
whole-cache entry or the fallback (a C<$when> before now: now). For one
pending: its decision is cancelled (a C<cancel>). For one retired
already, nothing changes. Returns its entry.

=head2 make_current

  $set->make_current($id, current_from => $when)
  $set->make_current($id, stage => $seconds)

A C<rollback> decision: dictionary C<$id> becomes its prefix's current one
from C<$when> (epoch seconds or C<YYYY-MM-DDTHH:MM:SSZ>; now by default),
or C<$seconds> after the set is written (as C<stage> of L</add>);
whatever of the prefix had not taken effect is superseded. For the
dictionary writers use now while a decision is pending: a C<cancel> of
that decision instead. Croaks, changing nothing, for a removed or unknown
ID, for a dictionary whose file is missing, unreadable or not the one the
manifest lists, and for the current one when nothing is pending. Returns
its entry. C<cmrx-dict rollback> calls it, with the timing of rule 3 of
L</The newest decision holds>.

=head2 cancel

  $set->cancel($prefix)

A C<cancel> decision: what is pending for C<$prefix> never takes effect,
and writers stay on what they use now. Returns the decision it cancelled
(a hash reference: C<seq>, C<kind>, C<prefix>, C<id>, C<made>,
C<effective>); croaks when nothing is pending.

=head2 decided

  $set->decided($prefix, at => $epoch)

What the decisions say of C<$prefix> at that moment (now by default): a
hash reference with C<writer> and C<before> (entries, or C<undef> for the
whole-cache entry or fallback), C<pending> (the decision waiting to take
effect, or C<undef>) and C<used> (a hash of the IDs of every dictionary
writers of any prefix have used by then).

=head2 history

  $set->history(prefix => $prefix, at => $epoch)

The set's decisions (of one prefix when C<prefix> is given), in order,
each a hash reference with C<seq>, C<kind>, C<prefix>, C<id> (undef for a
cancel), C<made> and C<effective> (epoch seconds),
and what became of it at that moment: C<status> (C<in effect>, C<took
effect>, C<superseded>, C<pending>, or C<not made yet> for one made after
it), C<by> (the C<seq> that superseded it) and C<cancels> (the C<seq> a
cancel cancelled). C<cmrx-dict history> prints it.

=head2 check_clock

  $set->check_clock

Now (epoch seconds, whole), or croaks, naming both times, when the clock
is earlier than the newest line of the set's log: every method that
appends a line asks it (L</Time only moves forward>).

=head2 remove

  $set->remove($id)

Drops retired dictionary C<$id> from the set, keeping its ID in a
C<removed> line appended (its dictionary line stays) so that no other
dictionary gets it; L</write> deletes its file after writing the
manifest. Croaks for the one its prefix's writers
use now (retire it first) and for a pending one (cancel it first); its
decisions stay in the log.
Values that name a removed dictionary become misses in processes that did
not load it before; processes that loaded it keep it, and read those
values as before. It does not ask whether values still name it:
C<cmrx-dict prune> samples a cache to decide
(L<Cache::Memcached::RustXS::Dict::Prune>).

=head2 set_fallback

  $set->set_fallback(method => 'zstd', level => 3, savings => ..., samples => ..., measured => ...)

Sets what keys without a dictionary get (see L</The manifest>); C<method>
and C<level> are required. Returns it.

=head2 write

  $set->write

Writes the set into its folder (made if needed): the lines read, byte for
byte, then a line for each change since (L</The manifest>); it croaks,
writing nothing, when that log would not read back. First the dictionary files
added since it was read (each through a temporary file and a rename, so a
reader never sees half a file), then the manifest the same way, then it
deletes the files of removed dictionaries. A reader therefore always sees a
whole manifest whose files exist. Writers of one folder take turns (an
exclusive C<flock> on its C<.lock> file), and C<write> croaks when the
manifest on disk is not the one this object read (another writer went
first): read it again and redo the change. Returns the set.

=head2 as_string

  $set->as_string

The manifest's text, as L</write> would write it.

=head1 SEE ALSO

L<Cache::Memcached::RustXS::Zstd> (C<load_dictionaries>,
C<compress_methods>), L<Cache::Memcached::RustXS::Memcached>, L<cmrx-dict>,
the zstd format's description of dictionaries (RFC 8878, section 5).

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
