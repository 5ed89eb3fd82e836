package Cache::Memcached::RustXS::Zstd::DictionarySet;

use strict;
use warnings;

use Carp ();
use Digest::SHA ();
use Fcntl qw(:flock);
use File::Spec ();
use Cache::Memcached::RustXS ();
use Cache::Memcached::RustXS::Zstd::DictionarySet::Manifest qw(
    $FORMAT $MANIFEST_NAME $MAX_ID manifest_date epoch_of is_count is_percent is_id is_level shown
    parse_manifest manifest_text check_fallback_fields slurp atomic_write manifest_path file_mismatch header_id);
use Cache::Memcached::RustXS::Zstd::DictionarySet::State qw(now state_at staged_start);
use Cache::Memcached::RustXS::Zstd::DictionarySet::Decisions qw(
    decode_log encode_log entries_digest synthesize_log reconcile_log project_entries);
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
    my $self = eval { _with_log(parse_manifest($dir, $bytes)) };
    unless ($self) {
        (my $why = $@) =~ s/\n\z//;
        Carp::croak("$path: $why");    # the message names the line
    }
    return bless $self, $class;
}

# The decisions of a parsed set: its log; when a release that knows no
# decisions changed its entries since, the log and what that release did
# (decisions at times the entries fix, the same at every read); when it has none (or its entries do not say what
# this release wrote), the log its entries stand for. Written on its next
# write.
sub _with_log {
    my ($self) = @_;
    my $f = $self->{set_fields};
    my $log = defined $f->{decisions} ? eval { decode_log($f->{decisions}) } : undef;
    die "the set line's decisions: $@" if defined $f->{decisions} && !$log;
    my $fits = $log && defined $f->{decisions_of}
               && $f->{decisions_of} eq entries_digest($self->{entries}, $self->{removed});
    my $kept = $log && !$fits ? reconcile_log($log, $self->{entries}) : undef;
    $self->{decisions} = $fits ? $log : $kept ? $kept : synthesize_log($self->{entries});
    $self->{synthesized} = $fits ? 0 : $kept ? 'reconciled' : defined $log ? 'rewritten' : 'converted';
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
# Every answer below comes from State's state_at: the one place that says
# what a set is at a moment.

# The moment asked for: the at option, else now.
sub _at {
    my ($who, %opt) = @_;
    Cache::Memcached::RustXS::_check_options($who, \%opt, 'at');
    return now() unless defined $opt{at};
    Carp::croak("$who: at must be epoch seconds, not " . shown($opt{at}))
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
# its prefix use), staged (they will from its current_from), retired.
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
    my $e = $self->entry($id) or Carp::croak("no dictionary with ID " . shown($id) . " in the set in $self->{dir}");
    return File::Spec->catfile($self->{dir}, $e->{file});
}

# The bytes of dictionary $id, checked against the manifest: croaks when
# the file is missing, truncated, replaced, or another set's.
sub dictionary_bytes {
    my ($self, $id) = @_;
    my $e = $self->entry($id) or Carp::croak("no dictionary with ID " . shown($id) . " in the set in $self->{dir}");
    return $self->{pending}{ $e->{id} } if $self->{pending} && exists $self->{pending}{ $e->{id} };
    my $path = File::Spec->catfile($self->{dir}, $e->{file});
    my $bytes = slurp($path);
    Carp::croak("$path: cannot read dictionary $e->{id} (prefix " . shown($e->{prefix}) . "): $!")
        unless defined $bytes;
    my $why = file_mismatch($e, $bytes);
    Carp::croak("$path: $why: not the file of dictionary $e->{id} (prefix " . shown($e->{prefix})
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
        decisions => [],
        set_fields => { created => manifest_date(now()) }, manifest_sha256 => undef,
    }, $class;
}

my @ADD_OPTIONS = qw(prefix dictionary level id savings samples trained current_from stage);
my @DICTIONARY_FIELDS = @Cache::Memcached::RustXS::Zstd::DictionarySet::Manifest::DICTIONARY_FIELDS;

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
              . " to $Cache::Memcached::RustXS::Zstd::DictionarySet::Manifest::MAX_LEVEL), not " . shown($opt{level}))
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
        Carp::croak("add: id must be 1 to $MAX_ID, not " . shown($opt{id})) unless is_id($opt{id});
        $bytes = _with_id($bytes, $opt{id});
        $id = $opt{id};
    }
    if (my $same = $self->_id_user($id)) {
        Carp::croak("add: dictionary ID $id is in the set already (prefix " . shown($same->{prefix})
                  . ', ' . ($same->{state} || 'removed: values may still name it')
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
                  . shown($opt{$name})) unless $ok;
    }
    my $now = int now();
    # Its state and dates are written from the decisions (settle).
    my %e = (
        %extra,
        id => $id, prefix => $prefix, state => 'retired', file => $self->_file_name($prefix, $id),
        level => 0 + $opt{level}, size => length $bytes, sha256 => Digest::SHA::sha256_hex($bytes),
        trained => manifest_date(defined $opt{trained} ? $opt{trained} : $now, 'add: trained'),
    );
    $e{savings} = $opt{savings} if defined $opt{savings};
    $e{samples} = $opt{samples} if defined $opt{samples};
    my $effective = defined $stage ? ($stage > 0 ? staged_start($now, $stage) : $now)
                  : defined $opt{current_from} ? epoch_of(manifest_date($opt{current_from}, 'add: current_from'))
                  : $now;
    push @{ $self->{entries} }, \%e;
    $self->{pending}{$id} = $bytes;
    $self->_decide(kind => 'train', prefix => $prefix, id => $id, made => $now, effective => $effective,
                   stage => $stage);
    return _copy(\%e);
}

# Appends a decision (kind, prefix, id, made, effective; stage: seconds
# after the write, when write gives it its effective time) and writes
# down the entries' fields as the decisions now say.
sub _decide {
    my ($self, %d) = @_;
    my $stage = delete $d{stage};
    my $seq = 1;
    $seq = $_->{seq} + 1 for grep { $_->{seq} >= $seq } @{ $self->{decisions} };
    push @{ $self->{decisions} }, { %d, seq => $seq };
    $self->{stage_on_write}{$seq} = $stage if defined $stage && $stage > 0;
    $self->settle(at => $d{made});
    return $self->{decisions}[-1];
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
    Carp::croak("$who: stage must be seconds, not " . shown($opt->{stage}))
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
# decision is cancelled; for one retired already, a time given (or now,
# when its date is not known) becomes its retirement date.
sub retire {
    my ($self, $id, %opt) = @_;
    Cache::Memcached::RustXS::_check_options('retire', \%opt, 'retired');
    my $e = $self->_entry_of('retire', $id);
    my $now = int now();
    my $when = defined $opt{retired} ? epoch_of(manifest_date($opt{retired}, 'retire: retired')) : $now;
    my $state = $self->_state($now);
    my $p = $state->{fold}{prefixes}{ $e->{prefix} } || {};
    my ($row) = grep { $_->{entry} == $e } @{ $state->{rows} };
    if ($p->{pending} && defined $p->{pending}{id} && $p->{pending}{id} eq $id) {
        $self->_decide(kind => 'cancel', prefix => $e->{prefix}, made => $now, effective => $now);
    }
    elsif ((defined $p->{writer} && $p->{writer} eq $id) || defined $opt{retired} || !defined $row->{since}) {
        $self->_decide(kind => 'retire', prefix => $e->{prefix}, id => $id, made => $now, effective => $when);
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
    Carp::croak("$who: no dictionary with ID " . shown($id) . ' in the set');
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
    my $now = int now();
    my $p = $self->_state($now)->{fold}{prefixes}{ $e->{prefix} } || {};
    if (defined $p->{writer} && $p->{writer} eq $id) {
        Carp::croak("make_current: dictionary $id is the current one of prefix " . shown($e->{prefix})
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
    my $now = int now();
    my $pending = $self->_state($now)->{pending}{$prefix};
    Carp::croak('cancel: nothing is pending for the prefix ' . shown($prefix)) unless $pending;
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
    return map { +{ %$_, %{ $f->{decisions}{ $_->{seq} } || { status => 'not made yet' } } } }
           grep { !defined $prefix || $_->{prefix} eq $prefix } @{ $self->{decisions} };
}

# How the set's decisions were found when it was read: 0 (its log),
# 'converted' (synthesized from the entries of a set written before sets
# recorded decisions), 'reconciled' (a release that knows no decisions
# changed the entries after the log: its changes follow the log) or
# 'rewritten' (the same, but the entries do not say what the log's writer
# wrote: synthesized from them again).
sub synthesized { $_[0]{synthesized} || 0 }

# Writes the entries' fields as the decisions say at $at (now by default):
# what a release that knows no decisions reads. write does this.
sub settle {
    my ($self, %opt) = @_;
    project_entries($self->{entries}, $self->_state(_at('settle', %opt)));
    return $self;
}

sub remove {
    my ($self, $id) = @_;
    my ($e) = grep { $_->{id} eq $id } @{ $self->{entries} };
    Carp::croak("remove: no dictionary with ID " . shown($id) . " in the set") unless $e;
    # As the set is now: one whose staged successor has started is retired.
    my $now = now();
    $self->settle(at => $now);
    my $state = $self->_state($now);
    my $writing = $state->{writers}{ $e->{prefix} };
    Carp::croak("remove: dictionary $id is current for prefix " . shown($e->{prefix}) . ': retire it first')
        if $writing && $writing == $e;
    my $pending = $state->{pending}{ $e->{prefix} };
    Carp::croak("remove: dictionary $id is staged for prefix " . shown($e->{prefix}) . ': cancel it first')
        if $pending && defined $pending->{id} && $pending->{id} eq $id;
    $self->{entries} = [ grep { $_ != $e } @{ $self->{entries} } ];
    delete $self->{pending}{$id} if $self->{pending};
    push @{ $self->{removed_files} }, $e->{file};
    push @{ $self->{removed} }, { id => $e->{id}, prefix => $e->{prefix}, removed => manifest_date($now) };
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
    return _copy(\%f);
}

# ---- writing ---------------------------------------------------------------

sub as_string { manifest_text($_[0]) }

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
    # What was staged for some seconds after the write starts then.
    my $now = now();
    my %stage = %{ delete $self->{stage_on_write} || {} };
    $_->{effective} = staged_start($now, $stage{ $_->{seq} }) for grep { $stage{ $_->{seq} } } @{ $self->{decisions} };
    $self->settle(at => $now);
    @{ $self->{set_fields} }{qw(decisions decisions_of)}
        = (encode_log($self->{decisions}), entries_digest($self->{entries}, $self->{removed}));
    delete $self->{synthesized};
    my $text = manifest_text($self);
    atomic_write($path, $text);
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

# ---- what the engine provides ----------------------------------------------

sub _with_id {
    my ($bytes, $id) = @_;
    require Cache::Memcached::RustXS::Zstd;
    my $out = eval { Cache::Memcached::RustXS::Zstd::dictionary_with_id($bytes, $id) };
    Carp::croak('add: ' . Cache::Memcached::RustXS::_error_message($@)) unless defined $out;
    return $out;
}

sub _check_engine {
    my ($bytes) = @_;
    require Cache::Memcached::RustXS::Zstd;
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
written with it still decode, until a tool decides no stored value names it
any more and removes it (L</remove>; C<cmrx-dict prune> does, for the
retired dictionaries that no sampled value names and that were retired
long enough ago).

=head2 Staging and rolling back

A dictionary must not be written before every reader that may meet it has
it. So a dictionary can be added I<staged> (L</add> with C<stage> or
C<current_from>): a process loads it when it reads the set (at start, at
a writer's rescan, or when it first meets a value written with it:
L<Cache::Memcached::RustXS::Operations/What each process loads, and when>),
and writers go on writing the prefix's current
dictionary until the time it takes effect, then write the new one. The
writers of this distribution follow their set while they run
(L<Cache::Memcached::RustXS::Zstd/compress_methods(dictionaries =E<gt> $dir, prefix =E<gt> $prefix, rescan_interval =E<gt> 60, max_output =E<gt> 64 MiB)>
and L<Cache::Memcached::RustXS::Memcached>): they take up a staged
dictionary at its time, and an added or rolled back one within their
rescan interval, without a restart. Ship a set with staged entries to every
host once; stage it longer than the time it takes to reach the last host
plus the rescan interval, and no writer anywhere uses a dictionary that a
reader lacks. C<cmrx-dict train --all> stages what it adds (C<--stage>,
one hour by default). A stage counts from the L</write> of the set, not
from the call: the decision takes effect at the next whole second after the
write and the stage, plus one, so at least the stage after the command that
wrote the set has finished.

Rolling back is the same move backwards: L</make_current> makes an earlier
dictionary of a prefix current again (every reader still has it: retired
dictionaries stay loaded), and L</cancel> cancels what is pending. Which
dictionary writers use at any moment follows from the set's decisions by
one rule, below.

Every answer about time (L</current>, L</for_key>, L</schedule>,
L</previous>, L</next_change>, L</decided>, L</history>, and what
L</settle> and L</write> write down) comes from one function,
L<Cache::Memcached::RustXS::Zstd::DictionarySet::State>'s C<fold> of the
decisions, and "now" is its clock, which tests move instead of sleeping.

=head2 The newest decision holds

A set records its I<decisions>: each change of what a prefix's writers use
is one, kept in the set's log (the C<decisions> field of the manifest's
C<set> line). A decision has a number, C<seq> (1, 2, 3 ... in the order
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
keep the set, restore its manifest.

=item 5. Where to read it.

C<cmrx-dict history> lists the decisions in order (seq, when made, when in
effect, prefix, kind, dictionary) and what became of each: in effect, took
effect (and was followed by another), superseded (by which), pending; a
cancel names the decision it cancelled. C<cmrx-dict list> gives each
dictionary's state (current, staged, retired, removed). Both come from the
same fold of the decisions.

=item 6. Prefixes with or without their delimiter.

C<--prefix user> and C<--prefix user:> mean the same in every command
(C<train>, C<report>, C<rollback>, C<history>).

=item 7. What readers load.

Readers load every dictionary of the set, whatever its state: a retired one
stays loaded until C<cmrx-dict prune> removes it.

=back

=head2 Releases that know no decisions

Release 0.101 reads and writes sets too, and knows no decisions, no
staging and no dates: of each dictionary it reads only C<state> (which
one is current for its prefix), and when it rewrites a set it keeps every
field it does not know, on every line, as it is. So the log is a field of
the C<set> line, and each dictionary's line still says what 0.101 needs:
L</write> writes the entries' fields from the decisions at that moment
(L</settle>). The dictionary writers use is C<state=current> with its
C<current_from>; a pending one is C<state=retired> with a C<current_from>
and no C<retired> date; every other one is C<state=retired> with its
C<retired> date, when writers stopped using it. Each line also says in
C<decided> what the decisions made it at that moment (C<current>,
C<staged> or C<retired>), a field 0.101 keeps as it is when it changes
C<state>.

What 0.101 reads of such a set is therefore what writers used at the
moment of the last write: it loads every dictionary (a pending one too,
so its readers read what the new one writes), but takes up nothing
staged; a staged first dictionary leaves its prefix on the fallback (or
the whole-cache entry) for it. Once this release writes the set again
after the staged time (any write: a C<train>, a C<rollback>, a
C<prune>), 0.101 reads the new writer from that write on.

A set written before sets recorded decisions (no log) reads as the
decisions its entries stand for, and is converted on its next write,
nothing lost: each dictionary writers used is a C<train> at its
C<current_from> (not written: earlier than any), ended by a C<retire> at its
C<retired> date unless another dictionary of its prefix started then (no
date: a retirement at a time not known, which C<cmrx-dict prune> counts
from when it first sees it, made after the dictionary listed next for its
prefix, which replaced it, as 0.101 lists them); the current one without a C<current_from> is a
C<train> at once after the others of its prefix; a staged one, a C<train>
made after those; one cancelled before its time (its C<current_from> after
its C<retired> date), a C<train> and a C<cancel> at its C<retired> date.

A set that 0.101 changed after this release wrote it keeps its log, but
its entries no longer match the log (the set line's C<decisions_of>, a
digest of the fields that 0.101 reads, differs). 0.101 changes a set in
three ways, and each is found on its line, where C<state> and C<decided>
differ: C<add> retrains a prefix (a line with no C<decided>, current, and
the prefix's writer C<state=retired> with its C<current_from> kept and no
C<retired> date), C<retire> takes a prefix's writer away, C<remove> drops
a retired dictionary. The log is kept, and what 0.101 did follows it as
decisions effective at once, made at a time the set itself gives, so
that every read finds the same decisions: the time 0.101 wrote is not
recorded, so each is made at the time of the log's last decision, or,
for a C<train>, at the C<trained> date 0.101 stamps on the dictionary it
adds if that is later. They are a C<train> of each dictionary it added,
a C<retire> of a writer it retired with nothing in its place, a
C<rollback> to a dictionary made current again by hand. Being the newest
decisions, they supersede whatever was staged and still pending at that
time, which 0.101 ignored, and which therefore never takes effect:
writers follow 0.101's retrain, "used before" is the dictionary it
retired (never a staged one no writer used), and C<cmrx-dict history>
says that the last decisions are 0.101's. A prefix
0.101 did not change keeps its decisions, a staged one included. The next
write records them. A set that 0.101 rewrote without changing its entries
keeps its log as it is. (A set whose lines have no C<decided>, written by
a development version of this release, has its decisions synthesized
from its entries again, as for a set without a log; a current dictionary
with no C<current_from> was then added by 0.101 after the others of its
prefix, which is also what writers follow.)

This module reads, checks and writes sets. It needs nothing but perl 5.10.1
and its core modules to read one (L<Digest::SHA> for the files' checksums);
the engine (L<Cache::Memcached::RustXS>) is loaded when a dictionary is
added.

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

The file C<manifest> in the folder: text, one record a line, fields
C<name=value> separated by single spaces; a byte of a value outside
printable ASCII, a space and C<%> are written C<%XX> (hexadecimal). Lines
starting with C<#> and empty lines are comments. An example:

    cmrx-dictionary-set 1
    # A zstd dictionary set: Cache::Memcached::RustXS::Zstd::DictionarySet describes this file.
    set id=3f0c9a5be1d24c8e9b7a6d5c4b3a2f10 created=2026-05-01T10:00:00Z decisions=1,train,1777629600,1777629600,1,user:;2,train,1777629600,1777629600,2,post:;3,train,1780308000,1780308000,3,user:;4,train,1780308000,1780308000,5, decisions_of=0c1d2e3f4a5b6c7d delimiter=:
    fallback method=zstd level=3 savings=12.5 samples=800 measured=2026-05-01T10:00:00Z
    dictionary id=1 prefix=user: state=retired decided=retired file=user-1.dict level=9 size=16384 sha256=9f86... savings=61.5 samples=500 trained=2026-05-01T10:00:00Z retired=2026-06-01T10:00:00Z
    dictionary id=2 prefix=post: state=current decided=current file=post-2.dict level=9 size=16384 sha256=60303... savings=55 samples=500 trained=2026-05-01T10:00:00Z
    dictionary id=3 prefix=user: state=current decided=current file=user-3.dict level=9 size=16384 sha256=fd61a... trained=2026-06-01T10:00:00Z
    dictionary id=5 prefix= state=current decided=current file=5.dict level=9 size=32768 sha256=2c26b... trained=2026-06-01T10:00:00Z other_keys=1
    removed id=4 prefix=cart: removed=2026-07-01T10:00:00Z
    end dictionaries=4 removed=1

=over 4

=item C<cmrx-dictionary-set 1>

The first line: the format's name and version. A reader refuses a version
newer than it knows.

=item C<set id=... created=...>

The set's identity: 32 hexadecimal digits, random, made when the set is
created and kept by every later write. A reader that has loaded a set
refuses a manifest of another identity in the same folder (another set
copied over it) instead of mixing the two. C<created> is optional, as is
C<delimiter>: the character that ends the keys' prefixes, as
C<cmrx-dict train --all> grouped them (C<--delimiter>), by which a writer's
prefix given without it is matched (L</resolve_prefix>). C<decisions> is
the set's log of decisions (L</The newest decision holds>): the decisions
separated by C<;>, each C<SEQ,KIND,MADE,EFFECTIVE,ID,PREFIX> (times in
epoch seconds, C<-> when not known; ID C<-> for a cancel; a C<,>, C<;> or
C<%> of the prefix written C<%XX>), and C<decisions_of> a digest of the
entries it was written beside (see L</Releases that know no decisions>).

=item C<fallback method=zstd|gzip level=N savings=PCT samples=N measured=DATE>

What to write for keys that no dictionary's prefix matches, as the trainer
measured it: zstd without a dictionary at a zstd level, or gzip (the format
every client reads) at a gzip level (0 to 12; Compress::Zlib's C<memGzip>
uses 9). Optional: without it, the fallback is gzip at level 9, which is
what the clients write without this distribution.

=item C<dictionary id=N prefix=P state=current|retired decided=STATE current_from=DATE file=F level=N size=N sha256=HEX savings=PCT samples=N trained=DATE retired=DATE>

One dictionary. C<id> is the ID in its header (1 to 4294967295), which
every frame made with it names; no two dictionaries of a set share one.
C<state>: C<current> is the one writers use for C<prefix> (at most one per
prefix), C<retired> is kept for reading. C<file> is its file's name in the
folder (no directories). C<level> is the zstd level writers use with it
(-7 to 22). C<size> and C<sha256> are its file's length and SHA-256
(lower-case hexadecimal): a file that is truncated, replaced, or another
set's is refused instead of used. C<savings> is the percentage of the
held-out values' bytes that compressing them with this dictionary at this
level saves, 100 x (1 - compressed / uncompressed); C<samples> the number of
values it was trained on; C<trained> when (UTC). Those three are optional.
C<retired>, on a retired dictionary: when it was retired (UTC), which
C<cmrx-dict prune> counts its age from. Sets written by release 0.101 and
earlier have no C<retired> dates; they load as they are, their retirements
of unknown date (C<retired> is then missing from the entry), and earlier
releases read and keep the field like any other.

C<current_from>: when the dictionary became, or becomes, its prefix's
current one. On a C<state=retired> line without a C<retired> date it
marks a I<staged> dictionary (see L</Staging and rolling back>); with a
C<retired> date, writers used it from C<current_from> until C<retired>,
or, when C<current_from> is the later of the two, it was staged and
cancelled before its time and no writer used it. These fields are written
from the decisions (L</settle>) for releases that know no decisions; this
release reads them only in a set without a log (see
L</Releases that know no decisions>). Fields C<written_until> and
C<written_from>, which development versions of this release wrote (no
released one did), are read no more and dropped on the next write.

C<decided>: what the decisions made the dictionary when this release
last wrote the set: C<current>, C<staged> or C<retired>. Release 0.101
keeps it as it is when it changes C<state>, so where the two differ, 0.101
changed the line (see L</Releases that know no decisions>).

C<current_from_copy>, which development versions of this release wrote
beside C<current_from>, is read only when C<current_from> is missing and
is not written.

C<other_keys> (on the whole-cache entry, the one of the empty prefix):
C<0> when keys whose prefix has no dictionary get the fallback instead of
it (see L</The whole-cache entry>).

=item C<removed id=N prefix=P removed=DATE>

A dictionary that was in the set and was removed (L</remove>): its file
is gone, but values in a cache may still name its ID, so the ID is never
given to another dictionary of the set (a reader would decode those values
with the wrong dictionary). C<prefix> and C<removed> (when) are for people.

=item C<end dictionaries=N removed=M>

The last line, with the numbers of dictionary and removed lines
(C<removed=0> may be left out): a manifest cut short is refused, not read as
a smaller set.

=back

Dates are ISO 8601 in UTC to the second (C<2026-05-01T10:00:00Z>). Other
fields (names of lower-case letters, digits and C<_>) may follow on any line:
this module keeps them as they are and gives them back in the entries, so
that tools can record more (the memory a dictionary saves in memcached's
terms, the size asked of the trainer, ...).

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
line, when it is missing, is not a manifest, is of a newer format, is
truncated (no end line, or fewer dictionaries than it counts, or a line cut
short), or lists two dictionaries with one ID, one file twice, or two
current dictionaries for one prefix. It does not read the dictionary files:
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

Every dictionary, current and retired, in the manifest's order: hash
references (copies) with the fields above (C<id>, C<prefix>, C<state>,
C<file>, C<level>, C<size>, C<sha256>, and C<savings>, C<samples>,
C<trained> and other fields where the manifest has them).

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
prefix's writers use it; C<since> its C<current_from>, or its C<trained>
date), C<staged> (they will from C<since>), C<retired> (C<since> its
C<retired> date, or when the dictionary that took over from it started;
C<undef> where the set does not know) or C<removed> (C<since> its C<removed>
date). C<cmrx-dict list> prints it.

=head2 delimiter

  $set->delimiter

The delimiter recorded on the set line (C<undef> without one).

=head2 set_delimiter

  $set->set_delimiter($delimiter)

Records it (written by L</write>).

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
prefix's dictionary before is retired. Returns the new entry, its fields
as the decisions say now (a staged one C<state=retired> with its
C<current_from>). Options:

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
until then (and is retired by L</settle> after it), and every process
has the time to load the new one first
(L<Cache::Memcached::RustXS::Operations/What each process loads, and when>). Now or earlier, or without the option: current at once.

=item stage => $seconds

Instead of C<current_from>: staged for C<$seconds> after the set is
written. L</write> gives it its C<current_from>: the next whole second
after the write and C<$seconds>, plus one. 0: current at once.

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
whole-cache entry or the fallback. For one pending: its decision is
cancelled (a C<cancel>). For one retired already: C<$when>, when given,
becomes its C<retired> date (so does now when its date is not known);
without it, nothing changes. Returns its entry.

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
its entry. C<cmrx-dict rollback> calls it, with the rule's timing (at once
to a dictionary writers have used, staged to one they have not).

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
cancel), C<made> and C<effective> (epoch seconds; undef when not known),
and what became of it at that moment: C<status> (C<in effect>, C<took
effect>, C<superseded>, C<pending>, or C<not made yet> for one made after
it), C<by> (the C<seq> that superseded it) and C<cancels> (the C<seq> a
cancel cancelled). C<cmrx-dict history> prints it.

=head2 synthesized

  $set->synthesized

How the decisions were found when the set was read: C<0> (its log),
C<converted> (a set without a log: synthesized from its entries),
C<reconciled> (release 0.101 changed its entries after the log was
written: the log, then 0.101's changes as decisions made when read) or
C<rewritten> (the same, but its lines do not say what was written:
synthesized from its entries again). See
L</Releases that know no decisions>.

=head2 settle

  $set->settle(at => $epoch)

Writes into the entries, in the object, what the decisions say at that
moment (now by default), for releases that know no decisions (see
L</Releases that know no decisions>): the dictionary writers use is
C<state=current> with its C<current_from>, a pending one staged, the others
retired with their C<retired> dates. No decision changes. L</write>
settles first. Returns the set.

=head2 remove

  $set->remove($id)

Drops retired dictionary C<$id> from the set, keeping its ID in a
C<removed> line so that no other dictionary gets it; L</write> deletes its
file after writing the manifest. Croaks for the one its prefix's writers
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

Writes the set into its folder (made if needed), settled (L</settle>): first the dictionary files
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
